// No rows while `graphsvc index rebuild` runs (index/mark_vector_rebuild): the
// caller then falls back to the exact scan instead of waiting on the index.
OPTIONAL MATCH (m:GraphsvcMeta {key: 'vectorIndex'})
WITH m
WHERE m IS NULL
CALL db.index.vector.queryNodes('current_embedding', $k, $embedding)
YIELD node, score
WHERE node.subject = $subject
  AND ($includeArchived OR NOT (coalesce(node.atomisedInto, 0) > 0 AND node.archivedAt IS NOT NULL))
RETURN node.atomId AS atomId, node.rev AS rev, score AS semantic,
       node.atomisedInto AS atomisedInto, node.archivedAt AS archivedAt,
       node.text AS text
ORDER BY semantic DESC
LIMIT $limit
