// One hop of the ordinary link graph around the given atoms' heads as of $asOf,
// both directions (the shape of atomise/link_edges). Outgoing: the head's links
// whose target existed by then. Incoming: links held by other atoms' heads as of
// then that were not retired (what :Current marks now). Unavailable links are left
// out (they never name their target, LNK-2).
UNWIND $atomIds AS aid
MATCH (a:Atom {subject: $subject, atomId: aid})
CALL (a) {
  MATCH (h:Revision)
  WHERE h.subject = $subject AND h.atomId = a.atomId AND h.createdAt <= $asOf
  RETURN h ORDER BY h.rev DESC LIMIT 1
}
CALL (h) {
  OPTIONAL MATCH (h)-[l:LINK]->(t {subject: $subject})
  WHERE NOT coalesce(l.unavailable, false) AND NOT t:Unavailable
  RETURN collect(CASE WHEN l IS NULL THEN null
                 ELSE {src: h.atomId, dst: t.atomId, role: l.role, at: l.at} END) AS outs
}
CALL (a, h) {
  CALL (a, h) {
    MATCH (s:Revision {subject: $subject})-[l:LINK]->(h)
    RETURN s, l
    UNION ALL
    MATCH (s:Revision {subject: $subject})-[l:LINK]->(a)
    RETURN s, l
  }
  WITH s, l
  WHERE NOT coalesce(l.unavailable, false) AND s.createdAt <= $asOf
    AND s.state <> 'retired'
    AND NOT EXISTS {
      MATCH (m:Revision)
      WHERE m.subject = $subject AND m.atomId = s.atomId AND m.createdAt <= $asOf
            AND m.rev > s.rev
    }
  RETURN collect({src: s.atomId, dst: h.atomId, role: l.role, at: l.at}) AS ins
}
RETURN outs + ins AS edges
