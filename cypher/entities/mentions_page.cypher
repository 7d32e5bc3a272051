// One page of the current heads that mention an entity (ENT-5: Entity.mentions),
// by atomId after $after; $limit = first + 1.
MATCH (e:Entity {subject: $subject, key: $key})<-[m:MENTIONS]-(r:Revision:Current)
WHERE $after IS NULL OR r.atomId > $after
WITH r, m ORDER BY r.atomId
LIMIT $limit
RETURN r.atomId AS atomId, r.rev AS rev, m.count AS count, m.name AS name
