// The required links of a set of pinned revisions, resolved for the closure (RD-2):
// an observed target stays pinned (a later retire does not block it); a logical
// target follows the atom's head, so a retired or purged head blocks. A target
// is stale when a watch its provenance declared has moved (LNK-1), including the
// watches of the tokens that provenance inherited (TOK-5: inherited inputs come
// along).
UNWIND $refs AS x
MATCH (r:Revision {subject: $subject, atomId: x.atomId, rev: x.rev})-[l:LINK]->(t)
WHERE l.required
OPTIONAL MATCH (t:Atom)-[:HEAD]->(h:Revision)
WITH x, l, t, CASE WHEN t:Atom THEN h WHEN t:Revision THEN t ELSE null END AS target
RETURN x.atomId AS srcAtomId, x.rev AS srcRev, l.at AS at,
       coalesce(l.unavailable, false) OR t:Unavailable AS unavailable,
       target.atomId AS atomId, target.rev AS rev, target.state AS state,
       CASE WHEN target IS NULL THEN false ELSE EXISTS {
         MATCH (target)-[:GENERATED_FROM]->(:Input)-[:INHERITS*0..]->(:Input)
               -[:WATCHES]->(w:Revision)<-[:HAS_REVISION]-(wa:Atom)
         WHERE wa.headRev > w.rev
       } END AS stale
ORDER BY srcAtomId, srcRev, l.ordinal
