// The source citations of each given revision as it stood at $asOf: a revision's
// citations never change, so these are its citations when it existed by $asOf and
// nothing when it was created later.
UNWIND $refs AS x
MATCH (:Atom {subject: $subject, atomId: x.atomId})-[:HAS_REVISION]->
      (r:Revision {rev: x.rev})
WHERE r.createdAt <= $asOf
CALL (r) {
  OPTIONAL MATCH (r)-[c:CITES]->(s:Source {subject: $subject})
  WITH c, s ORDER BY c.ordinal
  RETURN collect(CASE WHEN c IS NULL THEN null ELSE {
    ordinal: c.ordinal, start: c.start, end: c.end, unit: c.unit,
    verified: coalesce(c.verified, false), sourceKey: s.sourceKey, uri: s.uri,
    version: s.version, digest: s.digest
  } END) AS citations
}
RETURN x.atomId AS atomId, x.rev AS rev, citations
