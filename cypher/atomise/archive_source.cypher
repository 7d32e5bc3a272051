// Archive the parent by a NEW revision (never by editing a stored one): same text,
// sources, links and provenance as the revision it supersedes, state 'archived',
// atomisedInto / archivedAt / atomIds set. It stays :Current (with the parent's
// embedding) so includeArchived can still find it; the default guard hides it.
MATCH (a:Atom {subject: $subject, atomId: $atomId})-[h:HEAD]->(old:Revision {rev: $fromRev})
CREATE (n:Revision:Current {
  subject: $subject, atomId: $atomId, rev: $toRev, text: old.text, state: 'archived',
  digest: old.digest, tokens: old.tokens, sources: old.sources, createdAt: $now,
  actorKind: $actorKind, actorId: $actorId, policy: $policy,
  operationId: $operationId, changeId: 'archive', atomOf: old.atomOf,
  atomisedInto: $atomisedInto, archivedAt: $archivedAt, atomIds: $atomIds,
  embedding: old.embedding
})
CREATE (a)-[:HAS_REVISION]->(n)
CREATE (a)-[:HEAD]->(n)
CREATE (n)-[:SUPERSEDES]->(old)
DELETE h
SET a.headRev = $toRev, a.state = 'archived'
REMOVE old:Current, old.embedding
WITH old, n
CALL (old, n) {
  MATCH (old)-[l:LINK]->(t)
  CREATE (n)-[l2:LINK]->(t)
  SET l2 = properties(l)
  RETURN count(l2) AS links
}
CALL (old, n) {
  MATCH (old)-[c:CITES]->(s)
  CREATE (n)-[c2:CITES]->(s)
  SET c2 = properties(c)
  RETURN count(c2) AS cites
}
CALL (old, n) {
  MATCH (old)-[:GENERATED_FROM]->(g)
  CREATE (n)-[:GENERATED_FROM]->(g)
  RETURN count(*) AS gens
}
CALL (n) {
  MATCH (i:Input {subject: $subject, tokenId: $tokenId})
  CREATE (n)-[:DECIDED_FROM]->(i)
  RETURN count(*) AS decided
}
RETURN n.rev AS rev
