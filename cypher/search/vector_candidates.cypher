// No rows while `graphsvc index rebuild` runs (index/mark_vector_rebuild): the
// caller then falls back to the exact scan instead of waiting on the index.
// The index finds the candidates; their semantic signal is the exact cosine of the
// stored embeddings (the same function as search/vector_candidates_exact), not the
// index's score: the index scores quantised vectors (int7, quantiles per segment),
// and one outlier of large norm in a segment coarsens every score in it enough to
// swap near neighbours.
OPTIONAL MATCH (m:GraphsvcMeta {key: 'vectorIndex'})
WITH m
WHERE m IS NULL
CALL db.index.vector.queryNodes('current_embedding', $k, $embedding)
YIELD node
WHERE node.subject = $subject
  AND ($includeArchived OR NOT (coalesce(node.atomisedInto, 0) > 0 AND node.archivedAt IS NOT NULL))
WITH node, vector.similarity.cosine(node.embedding, $embedding) AS semantic
RETURN node.atomId AS atomId, node.rev AS rev, semantic,
       node.atomisedInto AS atomisedInto, node.archivedAt AS archivedAt,
       node.text AS text
ORDER BY semantic DESC
LIMIT $limit
