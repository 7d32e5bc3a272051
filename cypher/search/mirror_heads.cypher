// Every current head of one subject, for the process's mirror
// (graphsvc.store.head_mirror): one row per head, each with `size` (the number of
// heads, counted up to $max + 1). A subject of more than $max heads gets one row
// with `size` alone (its searches ask the indexes), an empty one a row of nulls
// with size 0. `links` are the head's declared links as [role, target atomId, the
// pinned revision of an observed link (null: a logical link to the atom),
// unavailable]: the mirror resolves them against the heads it holds, as
// search/expand_level does against the store; `mentions` the keys of the entities
// the head mentions and `entityIndexed` whether the entity index reached it, as
// search/entity_hop reads them, `entityForms` each mention's [entity key, form, type]
// (what search/query_entities reads). `state`, `sources`, `atomOf` and `viewLinks` (the
// links as view/atom_views gives them, a logical link's target as [..., atomId,
// null]: the mirror resolves its head) let a search show its hits without reading
// them again.
CALL () {
  MATCH (n:Revision:Current {subject: $subject})
  WITH n LIMIT $max + 1
  RETURN count(n) AS size
}
OPTIONAL CALL (size) {
  WITH size WHERE size <= $max
  MATCH (n:Revision:Current {subject: $subject})
  RETURN n.atomId AS atomId, n.rev AS rev, n.text AS text, n.atomisedInto AS atomisedInto,
         n.archivedAt AS archivedAt, n.embedding AS embedding,
         COLLECT {
           MATCH (n)-[l:LINK]->(t)
           RETURN [l.role, t.atomId, CASE WHEN t:Revision THEN t.rev END,
                   coalesce(l.unavailable, false)]
         } AS links,
         n.entityIndex IS NOT NULL AS entityIndexed,
         COLLECT { MATCH (n)-[:MENTIONS]->(e:Entity) RETURN e.key } AS mentions,
         COLLECT {
           MATCH (n)-[m:MENTIONS]->(e:Entity) RETURN [e.key, coalesce(m.form, e.key), m.type]
         } AS entityForms,
         n.state AS state, n.sources AS sources,
         coalesce(n.atomOf, COLLECT { MATCH (a:Atom)-[:HEAD]->(n) RETURN a.atomOf }[0])
           AS atomOf,
         COLLECT {
           MATCH (n)-[l:LINK]->(t)
           WITH l, t ORDER BY l.ordinal
           RETURN [l.role, l.at, l.required, l.orderKey,
                   coalesce(l.unavailable, false) OR t:Unavailable, t.atomId,
                   CASE WHEN t:Atom THEN null ELSE t.rev END]
         } AS viewLinks
}
RETURN size, atomId, rev, text, atomisedInto, archivedAt, embedding, links, entityIndexed,
       mentions, entityForms, state, sources, atomOf, viewLinks
