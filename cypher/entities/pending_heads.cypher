// The next heads a rebuild run indexes (see entities/count_pending), by subject.
MATCH (r:Revision:Current)
WHERE r.state = 'active' AND NOT (coalesce(r.atomisedInto, 0) > 0 AND r.archivedAt IS NOT NULL)
  AND ($subject IS NULL OR r.subject = $subject)
  AND coalesce(r.entityIndex, '') <> $version
WITH r ORDER BY r.subject, r.atomId
LIMIT $limit
RETURN r.subject AS subject, r.atomId AS atomId, r.rev AS rev, r.text AS text
