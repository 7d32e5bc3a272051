// One page of the subject's atoms at their heads, in atomId order after $after
// (keyset paging: the analysts' export streams a subject page by page), with each
// head's links (an unavailable target names no atom) and citations.
MATCH (a:Atom {subject: $subject})-[:HEAD]->(r:Revision)
WHERE a.atomId > $after
WITH a, r
ORDER BY a.atomId
LIMIT $limit
CALL (r) {
  OPTIONAL MATCH (r)-[l:LINK]->(t)
  WITH l, t, coalesce(l.unavailable, false) OR t:Unavailable AS gone
  ORDER BY l.ordinal
  RETURN collect(CASE WHEN l IS NULL THEN null ELSE {
    role: l.role, at: l.at, required: l.required, orderKey: l.orderKey, unavailable: gone,
    atomId: CASE WHEN gone THEN null ELSE t.atomId END,
    rev: CASE WHEN gone THEN null WHEN t:Atom THEN t.headRev ELSE t.rev END
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
