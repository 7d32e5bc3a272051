// Neo4j 2026.x (Cypher 25) with the vector index of index/create_vector_filtered:
// the index itself keeps to the subject (the subject is a filter property), so a
// small subject among large ones gets its own nearest neighbours, not the few of a
// global top k. The archived filter applies to the index's $k hits afterwards.
// `seen` is how many hits the index gave (fewer than $k: it had no more for the
// subject). As in search/vector_candidates: no rows while `graphsvc index rebuild`
// runs (the caller then scans exactly), and the semantic signal is the exact cosine
// of the stored embedding, not the index's (quantised) score.
CYPHER 25
OPTIONAL MATCH (m:GraphsvcMeta {key: 'vectorIndex'})
WITH m
WHERE m IS NULL
MATCH (node:Current)
  SEARCH node IN (
    VECTOR INDEX current_embedding
    FOR $embedding
    WHERE node.subject = $subject
    LIMIT $k
  )
WITH collect(node) AS found
UNWIND found AS node
WITH size(found) AS seen, node
WHERE $includeArchived OR NOT (coalesce(node.atomisedInto, 0) > 0 AND node.archivedAt IS NOT NULL)
WITH seen, node, vector.similarity.cosine(node.embedding, $embedding) AS semantic
ORDER BY semantic DESC
LIMIT $limit
RETURN node.atomId AS atomId, node.rev AS rev, semantic,
       node.atomisedInto AS atomisedInto, node.archivedAt AS archivedAt,
       node.text AS text, seen
