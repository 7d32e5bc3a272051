// Two BFS levels of the retrieval graph in one round trip: the edges of the
// frontier's atoms (level 1), then the edges of every atom level 1 reached that is
// not in the frontier (level 2). Both CALL blocks apply the edge rule of
// search/expand_level (same rows: [src, dst, role, reached node, its rev,
// atomisedInto, archivedAt]); the caller keeps level-2 rows only for the atoms its
// node and edge caps admitted, in the order it admitted them.
// `usage` holds the caller's usage states (the rule of search/usage_states, as
// [atomId, rev, state]) of every atom the rows name or the frontier holds, a
// superset of what the caller admits: no separate round trip for them.
CALL () {
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
  RETURN collect([aid, outs + ins]) AS first
}
WITH first,
     [n IN reduce(acc = [], row IN first | acc + [e IN row[1] | e[3]])
      WHERE NOT n IN $frontier] AS reached
CALL (reached) {
  UNWIND reached AS rid
  WITH DISTINCT rid AS aid
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
  RETURN collect([aid, outs + ins]) AS second
}
CALL (first, second) {
  UNWIND first + second AS row
  UNWIND [row[0]] + [e IN row[1] | e[3]] AS aid
  WITH collect(DISTINCT aid) AS named
  MATCH (u:UsageState {subject: $subject, policy: $policy})
  WHERE u.modelId = $modelId AND u.atomId IN named
  RETURN collect([u.atomId, u.rev, u.state]) AS usage
}
RETURN first, second, usage
