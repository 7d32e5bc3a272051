// The current heads of every atom the subject's change feed names after sequence
// $since (cypher/changes/record.cypher): what moves a process's mirror of the
// subject (graphsvc.store.head_mirror) forward. An atom without a current head
// comes back with nulls (the mirror drops it). A head read here may be newer than
// the sequence the caller read first (reads are read-committed); the next search
// reads that change again, so the mirror only ever moves forward. Columns as
// search/mirror_heads.
MATCH (c:Change {subject: $subject})
WHERE c.seq > $since
UNWIND c.atomIds AS changed
WITH DISTINCT changed
OPTIONAL MATCH (n:Revision:Current {subject: $subject, atomId: changed})
RETURN changed AS atomId, n.rev AS rev, n.text AS text, n.atomisedInto AS atomisedInto,
       n.archivedAt AS archivedAt, n.embedding AS embedding,
       CASE WHEN n IS NULL THEN [] ELSE COLLECT {
         MATCH (n)-[l:LINK]->(t)
         RETURN [l.role, t.atomId, CASE WHEN t:Revision THEN t.rev END,
                 coalesce(l.unavailable, false)]
       } END AS links,
       n.entityIndex IS NOT NULL AS entityIndexed,
       CASE WHEN n IS NULL THEN [] ELSE COLLECT {
         MATCH (n)-[:MENTIONS]->(e:Entity) RETURN e.key
       } END AS mentions,
       CASE WHEN n IS NULL THEN [] ELSE COLLECT {
         MATCH (n)-[m:MENTIONS]->(e:Entity) RETURN [e.key, coalesce(m.form, e.key), m.type]
       } END AS entityForms,
       n.state AS state, n.sources AS sources,
       CASE WHEN n IS NULL THEN null ELSE coalesce(n.atomOf, COLLECT {
         MATCH (a:Atom)-[:HEAD]->(n) RETURN a.atomOf
       }[0]) END AS atomOf,
       CASE WHEN n IS NULL THEN [] ELSE COLLECT {
         MATCH (n)-[l:LINK]->(t)
         WITH l, t ORDER BY l.ordinal
         RETURN [l.role, l.at, l.required, l.orderKey,
                 coalesce(l.unavailable, false) OR t:Unavailable, t.atomId,
                 CASE WHEN t:Atom THEN null ELSE t.rev END]
       } END AS viewLinks
