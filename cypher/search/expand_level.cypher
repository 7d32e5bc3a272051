// One BFS level of the retrieval graph: the permitted, current links of the
// frontier's head revisions, in both directions. A logical link binds to the
// target atom's current head; an observed link counts only while its pinned
// revision is still current. Superseded revisions' links are history, not graph.
UNWIND $frontier AS aid
MATCH (a:Atom {subject: $subject, atomId: aid})-[:HEAD]->(r:Current)
CALL (r) {
  MATCH (r)-[l:LINK]->(t)
  WHERE NOT coalesce(l.unavailable, false)
  OPTIONAL MATCH (t:Atom)-[:HEAD]->(th:Current)
  WITH l, CASE WHEN t:Atom THEN th WHEN t:Current THEN t ELSE null END AS target
  WHERE target IS NOT NULL
  RETURN collect({src: r.atomId, dst: target.atomId, role: l.role}) AS outs
}
CALL (a, r) {
  CALL (a, r) {
    MATCH (src:Current)-[l:LINK]->(r)
    RETURN src, l
    UNION ALL
    MATCH (src:Current)-[l:LINK]->(a)
    RETURN src, l
  }
  WITH src, l WHERE NOT coalesce(l.unavailable, false)
  RETURN collect({src: src.atomId, dst: r.atomId, role: l.role}) AS ins
}
RETURN outs + ins AS edges
