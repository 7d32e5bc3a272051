// The operation record of one atomisation (like a write batch's), so provenance
// queries find who wrote the atoms and the archive revision, with which input.
CREATE (o:Operation {subject: $subject, operationId: $operationId, kind: 'atomise',
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
  MATCH (i:Input {subject: $subject, tokenId: $tokenId})
  MERGE (o)-[:USED_INPUT]->(i)
  RETURN count(*) AS used
}
RETURN o.operationId AS operationId
