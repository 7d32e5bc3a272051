// One page of the citations of each given source, or of every source naming
// k.uri (the atom: URI of an atom, any version), held by the *head* revision of the
// citing atom. Ordered by (citing atomId, ordinal); keyset after
// (k.afterAtomId, k.afterOrdinal). k.limit is the page size plus one
// ($cap, the largest k.limit of the batch, bounds what one key collects).
UNWIND $keys AS k
CALL (k) {
  MATCH (s:Source {subject: $subject})
  WHERE (k.sourceKey IS NOT NULL AND s.sourceKey = k.sourceKey)
     OR (k.sourceKey IS NULL AND s.uri = k.uri)
  MATCH (r:Revision)-[c:CITES]->(s)
  WHERE k.afterAtomId IS NULL OR r.atomId > k.afterAtomId
        OR (r.atomId = k.afterAtomId AND c.ordinal > k.afterOrdinal)
  MATCH (:Atom {subject: $subject, atomId: r.atomId})-[:HEAD]->(r)
  WITH k, r, c, s ORDER BY r.atomId, c.ordinal
  LIMIT $cap
  WITH k, collect({
    atomId: r.atomId, rev: r.rev, ordinal: c.ordinal, start: c.start, end: c.end,
    unit: c.unit, verified: coalesce(c.verified, false), sourceKey: s.sourceKey,
    uri: s.uri, version: s.version, digest: s.digest
  }) AS found
  RETURN found[0..k.limit] AS citations
}
RETURN k.key AS key, citations
