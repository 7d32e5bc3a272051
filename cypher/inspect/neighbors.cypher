// One hop around revision ($atomId, $rev), collapsed per neighbour revision (INS-4)
// and ordered by (atomId, rev) so pages are stable.
//   outgoing: the root's links. With $version 'observed' an observed link binds to
//     its pinned revision and a logical link to the target atom's head; with
//     'logical' every target binds to its atom's head (INS-3).
//   incoming: links held by the *head* revision of another (or the same) atom —
//     observed links pinned to this revision, and logical links to this atom when
//     this revision is its head (a logical link binds to the head only).
// A link that is marked unavailable, or whose target is purged (:Unavailable),
// missing or of another subject, is returned only in `unavailable`, in the safe
// form of LNK-2: no target id, no body (and nothing about the source of an
// incoming one). Sources that are purged are not neighbours at all.
MATCH (a:Atom {subject: $subject, atomId: $atomId})-[:HAS_REVISION]->(r:Revision {rev: $rev})
CALL (a, r) {
  MATCH (r)-[l:LINK]->(t)
  WHERE $outgoing AND ($roles IS NULL OR l.role IN $roles)
  OPTIONAL MATCH (ta:Atom {subject: $subject, atomId: t.atomId})-[:HEAD]->(th:Revision)
  WITH l, t, ta, CASE WHEN l.at = 'observed' AND $version = 'observed' THEN t ELSE th END AS n
  RETURN 'outgoing' AS direction, l, n,
         coalesce(l.unavailable, false) OR t:Unavailable
           OR NOT coalesce(t.subject = $subject, false) OR ta IS NULL OR ta:Unavailable
           OR n IS NULL OR n:Unavailable AS unavailable
  UNION ALL
  MATCH (s:Revision)-[l:LINK]->(r)
  WHERE $incoming AND ($roles IS NULL OR l.role IN $roles) AND NOT s:Unavailable
  MATCH (sa:Atom {subject: $subject, atomId: s.atomId})-[:HEAD]->(s)
  WHERE NOT sa:Unavailable
  RETURN 'incoming' AS direction, l, s AS n, coalesce(l.unavailable, false) AS unavailable
  UNION ALL
  MATCH (s:Revision)-[l:LINK]->(a)
  WHERE $incoming AND a.headRev = r.rev AND ($roles IS NULL OR l.role IN $roles)
        AND NOT s:Unavailable
  MATCH (sa:Atom {subject: $subject, atomId: s.atomId})-[:HEAD]->(s)
  WHERE NOT sa:Unavailable
  RETURN 'incoming' AS direction, l, s AS n, coalesce(l.unavailable, false) AS unavailable
}
WITH unavailable,
     CASE WHEN unavailable THEN null ELSE n.atomId END AS nid,
     CASE WHEN unavailable THEN null ELSE n.rev END AS nrev,
     {direction: direction, role: l.role, at: l.at, required: coalesce(l.required, false),
      orderKey: l.orderKey, ordinal: l.ordinal} AS via
WITH unavailable, nid, nrev, collect(via) AS vias
ORDER BY nid, nrev
WITH collect(CASE WHEN unavailable THEN null ELSE {atomId: nid, rev: nrev, via: vias} END)
       AS groups,
     collect(CASE WHEN unavailable THEN vias ELSE null END) AS gone
RETURN size(groups) AS total, groups[0..$cap] AS neighbors,
       reduce(acc = [], vs IN gone | acc + vs) AS unavailable
