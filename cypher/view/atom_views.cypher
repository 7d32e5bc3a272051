UNWIND $refs AS x
MATCH (a:Atom {subject: $subject, atomId: x.atomId})-[:HAS_REVISION]->
      (r:Revision {rev: x.rev})
CALL (r) {
  OPTIONAL MATCH (r)-[l:LINK]->(t)
  WITH l, t ORDER BY l.ordinal
  RETURN collect(CASE WHEN l IS NULL THEN null ELSE {
    role: l.role, at: l.at, required: l.required, orderKey: l.orderKey,
    unavailable: coalesce(l.unavailable, false) OR t:Unavailable,
    atomId: t.atomId,
    rev: CASE WHEN t:Atom THEN t.headRev ELSE t.rev END
  } END) AS links
}
RETURN r.atomId AS atomId, r.rev AS rev, r.state AS state, r.text AS text,
       r.sources AS sources, coalesce(r.atomOf, a.atomOf) AS atomOf,
       r.atomisedInto AS atomisedInto,
       r.archivedAt AS archivedAt, a.headRev = r.rev AS head, links
