// One page of the links that point at each given atom: logical links to the atom and
// observed links pinned to any of its revisions, held by the *head* revision of the
// linking atom (superseded revisions' links are history, as in inspect). Ordered by
// (linking atomId, ordinal); keyset after (k.afterAtomId, k.afterOrdinal). Optional
// filters: k.role, k.at. k.limit is the page size plus one
// ($cap, the largest k.limit of the batch, bounds what one key collects).
UNWIND $keys AS k
MATCH (a:Atom {subject: $subject, atomId: k.atomId})
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
    AND (k.afterAtomId IS NULL OR s.atomId > k.afterAtomId
         OR (s.atomId = k.afterAtomId AND l.ordinal > k.afterOrdinal))
  MATCH (:Atom {subject: $subject, atomId: s.atomId})-[:HEAD]->(s)
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
