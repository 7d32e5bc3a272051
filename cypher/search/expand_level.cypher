// One BFS level of the retrieval graph: the permitted, current links of the
// frontier's head revisions, in both directions. A logical link binds to the
// target atom's current head; an observed link counts only while its pinned
// revision is still current. Superseded revisions' links are history, not graph.
// Each edge carries the head facts of the node it reaches, so no second lookup.
// Edges are lists [src, dst, role, reached node, its rev, atomisedInto, archivedAt]
// (lists decode faster than maps on the client).
UNWIND $frontier AS aid
MATCH (a:Atom {subject: $subject, atomId: aid})-[:HEAD]->(r:Current)
CALL (r) {
  CALL (r) {
    MATCH (r)-[l:LINK]->(:Atom)-[:HEAD]->(target:Current)
    RETURN l, target
    UNION ALL
    MATCH (r)-[l:LINK]->(target:Current)
    RETURN l, target
  }
  WITH l, target WHERE NOT coalesce(l.unavailable, false)
  RETURN collect([r.atomId, target.atomId, l.role, target.atomId, target.rev,
                  target.atomisedInto, target.archivedAt]) AS outs
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
  RETURN collect([src.atomId, r.atomId, l.role, src.atomId, src.rev,
                  src.atomisedInto, src.archivedAt]) AS ins
}
RETURN aid, outs + ins AS edges
