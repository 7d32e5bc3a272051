CREATE (i:Input {subject: $subject, tokenId: $tokenId, payloadDigest: $payloadDigest,
                 inputsDigest: $inputsDigest, presentations: $presentations,
                 sources: $sources, watches: $watchesJson, actorKind: $actorKind,
                 actorId: $actorId, policy: $policy, authGeneration: $authGeneration,
                 createdAt: $now, expiresAt: $expiresAt})
WITH i
CALL (i) {
  UNWIND $basis AS b
  MATCH (r:Revision {subject: $subject, atomId: b.atomId, rev: b.rev})
  CREATE (i)-[:BASIS]->(r)
  RETURN count(*) AS basis
}
CALL (i) {
  UNWIND $watches AS w
  MATCH (r:Revision {subject: $subject, atomId: w.atomId, rev: w.rev})
  CREATE (i)-[:WATCHES]->(r)
  RETURN count(*) AS watches
}
CALL (i) {
  UNWIND $presented AS p
  MATCH (r:Revision {subject: $subject, atomId: p.atomId, rev: p.rev})
  CREATE (i)-[:PRESENTED]->(r)
  RETURN count(*) AS presented
}
CALL (i) {
  UNWIND $inherit AS tid
  MATCH (parent:Input {subject: $subject, tokenId: tid})
  CREATE (i)-[:INHERITS]->(parent)
  RETURN count(*) AS inherited
}
CALL (i) {
  UNWIND $cites AS c
  MERGE (src:Source {subject: $subject, sourceKey: c.sourceKey})
    ON CREATE SET src.uri = c.uri, src.version = c.version, src.digest = c.digest
  CREATE (i)-[:CITES {ordinal: c.ordinal, start: c.start, end: c.end, unit: c.unit,
                      verified: c.verified}]->(src)
  RETURN count(*) AS cites
}
RETURN i.tokenId AS tokenId, basis, watches, presented, inherited, cites
