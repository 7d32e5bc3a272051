// One hop of the ordinary link graph around the given atoms' heads, both
// directions; unavailable links are left out (they never name their target, LNK-2).
UNWIND $atomIds AS aid
MATCH (a:Atom {subject: $subject, atomId: aid})-[:HEAD]->(h:Revision)
CALL (h) {
  OPTIONAL MATCH (h)-[l:LINK]->(t {subject: $subject})
  WHERE NOT coalesce(l.unavailable, false) AND NOT t:Unavailable
  RETURN collect(CASE WHEN l IS NULL THEN null
                 ELSE {src: h.atomId, dst: t.atomId, role: l.role, at: l.at} END) AS outs
}
CALL (a, h) {
  CALL (a, h) {
    MATCH (s:Current {subject: $subject})-[l:LINK]->(h)
    RETURN s, l
    UNION ALL
    MATCH (s:Current {subject: $subject})-[l:LINK]->(a)
    RETURN s, l
  }
  WITH s, l WHERE NOT coalesce(l.unavailable, false)
  RETURN collect({src: s.atomId, dst: h.atomId, role: l.role, at: l.at}) AS ins
}
RETURN outs + ins AS edges
