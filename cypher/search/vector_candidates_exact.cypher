// Exact scan of one subject's current heads: used when the shared vector index's
// top-k held too few of this subject's atoms (small subject in a big database).
// A head embedded by another model (while `graphsvc reembed` runs) has no semantic
// signal: its vector is of another length.
MATCH (node:Revision:Current {subject: $subject})
WHERE node.embedding IS NOT NULL AND size(node.embedding) = size($embedding)
  AND ($includeArchived OR NOT (coalesce(node.atomisedInto, 0) > 0 AND node.archivedAt IS NOT NULL))
WITH node, vector.similarity.cosine(node.embedding, $embedding) AS semantic
ORDER BY semantic DESC
LIMIT $limit
RETURN node.atomId AS atomId, node.rev AS rev, semantic,
       node.atomisedInto AS atomisedInto, node.archivedAt AS archivedAt,
       node.text AS text
