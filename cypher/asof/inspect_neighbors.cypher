// inspect/first_page's neighbourhood as of $asOf: one hop around revision ($atomId, $rev), collapsed
// per neighbour revision and ordered by (atomId, rev). Outgoing: an observed link
// (with $version 'observed') binds to its pinned revision, a logical one to the
// target's head as of $asOf. Incoming: links held by the linking atom's head as of
// $asOf — observed links pinned to this revision, logical links to this atom when
// this revision was its head as of then. Unavailable links (purged targets, no
// target by then, another subject) only in `unavailable`, in LNK-2's safe form.
MATCH (a:Atom {subject: $subject, atomId: $atomId})-[:HAS_REVISION]->(r:Revision {rev: $rev})
CALL (a) {
  MATCH (x:Revision)
  WHERE x.subject = $subject AND x.atomId = a.atomId AND x.createdAt <= $asOf
  RETURN max(x.rev) AS rootHead
}
CALL (a, r, rootHead) {
  MATCH (r)-[l:LINK]->(t)
  WHERE $outgoing AND ($roles IS NULL OR l.role IN $roles)
  OPTIONAL MATCH (ta:Atom {subject: $subject, atomId: t.atomId})
  CALL (ta) {
    OPTIONAL MATCH (h:Revision)
    WHERE h.subject = $subject AND h.atomId = ta.atomId AND h.createdAt <= $asOf
    WITH h ORDER BY h.rev DESC LIMIT 1
    RETURN h AS th
  }
  WITH l, t, ta, CASE WHEN l.at = 'observed' AND $version = 'observed' THEN t ELSE th END AS n
  RETURN 'outgoing' AS direction, l, n,
         coalesce(l.unavailable, false) OR t:Unavailable
           OR NOT coalesce(t.subject = $subject, false) OR ta IS NULL OR ta:Unavailable
           OR n IS NULL OR n:Unavailable AS unavailable
  UNION ALL
  MATCH (s:Revision)-[l:LINK]->(r)
  WHERE $incoming AND ($roles IS NULL OR l.role IN $roles) AND NOT s:Unavailable
        AND s.subject = $subject AND s.createdAt <= $asOf
        AND NOT EXISTS {
          MATCH (m:Revision)
          WHERE m.subject = $subject AND m.atomId = s.atomId AND m.createdAt <= $asOf
                AND m.rev > s.rev
        }
  MATCH (sa:Atom {subject: $subject, atomId: s.atomId})
  WHERE NOT sa:Unavailable
  RETURN 'incoming' AS direction, l, s AS n, coalesce(l.unavailable, false) AS unavailable
  UNION ALL
  MATCH (s:Revision)-[l:LINK]->(a)
  WHERE $incoming AND rootHead = r.rev AND ($roles IS NULL OR l.role IN $roles)
        AND NOT s:Unavailable AND s.subject = $subject AND s.createdAt <= $asOf
        AND NOT EXISTS {
          MATCH (m:Revision)
          WHERE m.subject = $subject AND m.atomId = s.atomId AND m.createdAt <= $asOf
                AND m.rev > s.rev
        }
  MATCH (sa:Atom {subject: $subject, atomId: s.atomId})
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
