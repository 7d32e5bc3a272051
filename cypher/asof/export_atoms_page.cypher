// One page of the subject's atoms for `graphsvc export --as-of/--since`
// (docs/time-travel.md), in atomId order after $after: each atom at its head as of
// $asOf (the newest revision created at or before it; atoms with none by then are
// left out), and with $since only atoms with a revision created in [$since, $asOf]
// (the incremental export). A logical link names its target's head as of $asOf.
// The shape is export/atoms_page's.
MATCH (a:Atom)
WHERE a.subject = $subject AND a.atomId > $after
  AND ($since IS NULL OR EXISTS {
    MATCH (x:Revision)
    WHERE x.subject = $subject AND x.atomId = a.atomId
          AND x.createdAt >= $since AND x.createdAt <= $asOf
  })
CALL (a) {
  MATCH (r:Revision)
  WHERE r.subject = $subject AND r.atomId = a.atomId AND r.createdAt <= $asOf
  RETURN r ORDER BY r.rev DESC LIMIT 1
}
WITH a, r
ORDER BY a.subject, a.atomId
LIMIT $limit
CALL (r) {
  OPTIONAL MATCH (r)-[l:LINK]->(t)
  CALL (t) {
    OPTIONAL MATCH (h:Revision)
    WHERE t:Atom AND h.subject = $subject AND h.atomId = t.atomId AND h.createdAt <= $asOf
    RETURN max(h.rev) AS headRev
  }
  WITH l, t, coalesce(l.unavailable, false) OR t:Unavailable
             OR (t:Atom AND headRev IS NULL) AS gone, headRev
  ORDER BY l.ordinal
  RETURN collect(CASE WHEN l IS NULL THEN null ELSE {
    role: l.role, at: l.at, required: l.required, orderKey: l.orderKey, unavailable: gone,
    atomId: CASE WHEN gone THEN null ELSE t.atomId END,
    rev: CASE WHEN gone THEN null WHEN t:Atom THEN headRev ELSE t.rev END
  } END) AS links
}
CALL (r) {
  OPTIONAL MATCH (r)-[c:CITES]->(s:Source)
  WITH c, s
  ORDER BY c.ordinal
  RETURN collect(CASE WHEN c IS NULL THEN null ELSE {
    sourceKey: s.sourceKey, start: c.start, end: c.end, unit: c.unit, verified: c.verified
  } END) AS cites
}
RETURN a.atomId AS atomId, r.rev AS rev, r.state AS state, r.text AS text,
       r.tokens AS tokens, a.createdAt AS createdAt, r.createdAt AS revisedAt,
       coalesce(r.atomOf, a.atomOf) AS atomOf, r.atomisedInto AS atomisedInto,
       r.archivedAt AS archivedAt, r.actorKind AS actorKind, r.actorId AS actorId,
       links, cites
ORDER BY atomId
