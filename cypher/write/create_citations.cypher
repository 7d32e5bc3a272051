UNWIND $cites AS c
MATCH (s:Revision {subject: $subject, atomId: c.srcAtomId, rev: c.srcRev})
MERGE (src:Source {subject: $subject, sourceKey: c.sourceKey})
  ON CREATE SET src.uri = c.uri, src.version = c.version, src.digest = c.digest
CREATE (s)-[:CITES {ordinal: c.ordinal, start: c.start, end: c.end, unit: c.unit,
                    verified: c.verified}]->(src)
RETURN count(*) AS created
