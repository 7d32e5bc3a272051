// One atom of an atomisation: the Atom, its first revision (a current head with
// its embedding) and the generation input (the InputToken that observed the parent).
MATCH (i:Input {subject: $subject, tokenId: $tokenId})
CREATE (a:Atom {subject: $subject, atomId: $atomId, headRev: 1, state: 'active',
                createdAt: $now, atomOf: $atomOf, atomDepth: $atomDepth, atomIndex: $index})
CREATE (r:Revision:Current {
  subject: $subject, atomId: $atomId, rev: 1, text: $text, state: 'active',
  digest: $digest, tokens: $tokens, sources: '[]', createdAt: $now,
  actorKind: $actorKind, actorId: $actorId, policy: $policy,
  operationId: $operationId, changeId: $changeId, atomOf: $atomOf, embedding: $embedding
})
CREATE (a)-[:HAS_REVISION]->(r)
CREATE (a)-[:HEAD]->(r)
CREATE (r)-[:GENERATED_FROM]->(i)
RETURN r.rev AS rev
