// A write batch's record (kind null: no property) or an atomisation's (kind 'atomise').
CREATE (o:Operation {subject: $subject, operationId: $operationId, kind: $kind,
                     actorKind: $actorKind, actorId: $actorId, policy: $policy,
                     createdAt: $now, changeCount: size($revisions)})
WITH o
CALL (o) {
  UNWIND $revisions AS x
  MATCH (r:Revision {subject: $subject, atomId: x.atomId, rev: x.rev})
  CREATE (r)-[:WRITTEN_BY]->(o)
  RETURN count(*) AS written
}
CALL (o) {
  UNWIND $tokenIds AS tid
  MATCH (i:Input {subject: $subject, tokenId: tid})
  MERGE (o)-[:USED_INPUT]->(i)
  RETURN count(*) AS used
}
RETURN o.operationId AS operationId
