// One page of the links that point at each given atom as of $asOf: logical links to
// the atom and observed links pinned to one of its revisions, held by the linking
// atom's head *as of $asOf* (the newest revision of that atom created at or before
// $asOf). Ordered by (linking atomId, ordinal); keyset after (k.afterAtomId,
// k.afterOrdinal); filters k.role, k.at. The atom itself must exist by $asOf.
UNWIND $keys AS k
MATCH (a:Atom {subject: $subject, atomId: k.atomId})
WHERE EXISTS {
  MATCH (x:Revision)
  WHERE x.subject = $subject AND x.atomId = a.atomId AND x.createdAt <= $asOf
}
CALL (a, k) {
  CALL (a) {
    MATCH (s:Revision)-[l:LINK]->(a)
    RETURN s, l
    UNION ALL
    MATCH (a)-[:HAS_REVISION]->(:Revision)<-[l:LINK]-(s:Revision)
    RETURN s, l
  }
  WITH k, s, l
  WHERE (k.role IS NULL OR l.role = k.role) AND (k.at IS NULL OR l.at = k.at)
    AND NOT coalesce(l.unavailable, false)
    AND s.subject = $subject AND s.createdAt <= $asOf
    AND (k.afterAtomId IS NULL OR s.atomId > k.afterAtomId
         OR (s.atomId = k.afterAtomId AND l.ordinal > k.afterOrdinal))
    AND NOT EXISTS {
      MATCH (n:Revision)
      WHERE n.subject = $subject AND n.atomId = s.atomId AND n.createdAt <= $asOf
            AND n.rev > s.rev
    }
  MATCH (:Atom {subject: $subject, atomId: s.atomId})
  WITH k, s, l, endNode(l) AS t ORDER BY s.atomId, l.ordinal
  LIMIT $cap
  WITH k, collect({
    role: l.role, at: l.at, required: coalesce(l.required, false), orderKey: l.orderKey,
    ordinal: l.ordinal, unavailable: false, fromAtomId: s.atomId, fromRev: s.rev,
    atomId: t.atomId, rev: CASE WHEN t:Atom THEN null ELSE t.rev END
  }) AS found
  RETURN found[0..k.limit] AS links
}
RETURN k.key AS key, links
