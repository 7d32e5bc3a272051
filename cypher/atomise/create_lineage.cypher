// The signed derives_from edge from an atom's first revision to the parent
// revision it was cut from (SIG-1). It is not a LINK: no role enters the link graph.
MATCH (c:Revision {subject: $subject, atomId: $fromAtomId, rev: $fromRev})
MATCH (p:Revision {subject: $subject, atomId: $toAtomId, rev: $toRev})
CREATE (c)-[d:DERIVES_FROM {relation: 'derives_from', signature: $signature,
                            keyId: $keyId, signedAt: $signedAt}]->(p)
RETURN count(d) AS created
