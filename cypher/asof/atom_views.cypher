// The views of the given revisions as of $asOf (the shape of view/atom_views): a
// revision created after $asOf is missing; `head` means head as of then, and a
// logical link names its target's head as of then (null rev: none by then, which
// the view shows as unavailable).
UNWIND $refs AS x
MATCH (a:Atom {subject: $subject, atomId: x.atomId})-[:HAS_REVISION]->
      (r:Revision {rev: x.rev})
WHERE r.createdAt <= $asOf
CALL (a, r) {
  OPTIONAL MATCH (n:Revision)
  WHERE n.subject = $subject AND n.atomId = a.atomId AND n.createdAt <= $asOf
        AND n.rev > r.rev
  RETURN count(n) = 0 AS head
}
CALL (r) {
  OPTIONAL MATCH (r)-[l:LINK]->(t)
  CALL (t) {
    OPTIONAL MATCH (h:Revision)
    WHERE t:Atom AND h.subject = $subject AND h.atomId = t.atomId AND h.createdAt <= $asOf
    RETURN max(h.rev) AS headRev
  }
  WITH l, t, headRev ORDER BY l.ordinal
  RETURN collect(CASE WHEN l IS NULL THEN null ELSE {
    role: l.role, at: l.at, required: l.required, orderKey: l.orderKey,
    unavailable: coalesce(l.unavailable, false) OR t:Unavailable
                 OR (t:Atom AND headRev IS NULL),
    atomId: t.atomId,
    rev: CASE WHEN t:Atom THEN headRev ELSE t.rev END
  } END) AS links
}
RETURN r.atomId AS atomId, r.rev AS rev, r.state AS state, r.text AS text,
       r.sources AS sources, coalesce(r.atomOf, a.atomOf) AS atomOf,
       r.atomisedInto AS atomisedInto,
       r.archivedAt AS archivedAt, head, links
