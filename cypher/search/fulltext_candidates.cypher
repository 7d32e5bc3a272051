CALL db.index.fulltext.queryNodes('current_text', $lucene, {limit: $k})
YIELD node, score
WHERE node.subject = $subject AND score > 0
  AND ($includeArchived OR NOT (coalesce(node.atomisedInto, 0) > 0 AND node.archivedAt IS NOT NULL))
RETURN node.atomId AS atomId, node.rev AS rev, score AS lexical,
       node.atomisedInto AS atomisedInto, node.archivedAt AS archivedAt,
       CASE WHEN node.embedding IS NULL THEN null
            ELSE vector.similarity.cosine(node.embedding, $embedding) END AS semantic
ORDER BY lexical DESC
LIMIT $limit
