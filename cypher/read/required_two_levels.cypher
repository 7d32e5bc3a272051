// Two levels of the required closure walk (RD-2) in one round trip: the required
// links of a set of pinned revisions (`first`), then those of every target that
// level makes `ok` (`second`; `covered` lists the revisions `second` was asked
// for). Most closures end within two levels, so most reads walk in one query.
//
// The rule, the same in both blocks: an observed target stays pinned (a later
// retire does not block it); a logical target follows the atom's head, so a
// retired or purged head blocks. A target is stale when a watch its provenance
// declared has moved (LNK-1), including the watches of the tokens that provenance
// inherited (TOK-5: inherited inputs come along). Rows are ordered by source and
// link ordinal; the caller keeps `second` rows only for the revisions it admits.
CALL () {
  UNWIND $refs AS x
  MATCH (r:Revision {subject: $subject, atomId: x.atomId, rev: x.rev})-[l:LINK]->(t)
  WHERE l.required
  OPTIONAL MATCH (t:Atom)-[:HEAD]->(h:Revision)
  WITH x, l, t, CASE WHEN t:Atom THEN h WHEN t:Revision THEN t ELSE null END AS target
  WITH x, l, coalesce(l.unavailable, false) OR t:Unavailable AS unavailable, target,
       CASE WHEN target IS NULL THEN false ELSE EXISTS {
         MATCH (target)-[:GENERATED_FROM]->(:Input)-[:INHERITS*0..]->(:Input)
               -[:WATCHES]->(w:Revision)<-[:HAS_REVISION]-(wa:Atom)
         WHERE wa.headRev > w.rev
       } END AS stale
  ORDER BY x.atomId, x.rev, l.ordinal
  RETURN collect({srcAtomId: x.atomId, srcRev: x.rev, at: l.at, unavailable: unavailable,
                  atomId: target.atomId, rev: target.rev, state: target.state,
                  stale: stale}) AS first
}
WITH first,
     [row IN first
      WHERE NOT row.unavailable AND row.atomId IS NOT NULL AND NOT row.stale
        AND NOT (row.at = 'logical' AND row.state = 'retired')
      | {atomId: row.atomId, rev: row.rev}] AS ok
WITH first, [y IN ok WHERE NOT y IN $refs] AS covered
CALL (covered) {
  UNWIND covered AS x
  WITH DISTINCT x
  MATCH (r:Revision {subject: $subject, atomId: x.atomId, rev: x.rev})-[l:LINK]->(t)
  WHERE l.required
  OPTIONAL MATCH (t:Atom)-[:HEAD]->(h:Revision)
  WITH x, l, t, CASE WHEN t:Atom THEN h WHEN t:Revision THEN t ELSE null END AS target
  WITH x, l, coalesce(l.unavailable, false) OR t:Unavailable AS unavailable, target,
       CASE WHEN target IS NULL THEN false ELSE EXISTS {
         MATCH (target)-[:GENERATED_FROM]->(:Input)-[:INHERITS*0..]->(:Input)
               -[:WATCHES]->(w:Revision)<-[:HAS_REVISION]-(wa:Atom)
         WHERE wa.headRev > w.rev
       } END AS stale
  ORDER BY x.atomId, x.rev, l.ordinal
  RETURN collect({srcAtomId: x.atomId, srcRev: x.rev, at: l.at, unavailable: unavailable,
                  atomId: target.atomId, rev: target.rev, state: target.state,
                  stale: stale}) AS second
}
RETURN first, second, covered
