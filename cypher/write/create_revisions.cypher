UNWIND $revisions AS r
MATCH (a:Atom {subject: $subject, atomId: r.atomId})
OPTIONAL MATCH (a)-[h:HEAD]->(prev:Revision)
CREATE (n:Revision {
  subject: $subject, atomId: r.atomId, rev: r.rev, text: r.text, state: r.state,
  digest: r.digest, tokens: r.tokens, sources: r.sources, createdAt: $now,
  actorKind: $actorKind, actorId: $actorId, policy: $policy,
  operationId: $operationId, changeId: r.changeId
})
CREATE (a)-[:HAS_REVISION]->(n)
CREATE (a)-[:HEAD]->(n)
SET a.headRev = r.rev, a.state = r.state
FOREACH (_ IN CASE WHEN r.current THEN [1] ELSE [] END |
  SET n:Current, n.embedding = r.embedding)
FOREACH (_ IN CASE WHEN prev IS NULL THEN [] ELSE [1] END |
  CREATE (n)-[:SUPERSEDES]->(prev)
  REMOVE prev:Current, prev.embedding)
DELETE h
RETURN count(n) AS created
