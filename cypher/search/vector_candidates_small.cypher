// Exact scan of one subject's current heads when the subject is small (at most
// $exactMax of them): its answer is the subject's own, whatever other subjects the
// shared vector index holds (an approximate index's top k depends on them), and a
// small subject holds few of the index's top k anyway. One row: `size` (the number
// of heads, counted up to $exactMax + 1) and, when size <= $exactMax, the top
// $limit hits as rows of search/vector_candidates_exact; otherwise no hits and the
// caller asks the index (search/vector_candidates).
CALL () {
  MATCH (n:Revision:Current {subject: $subject})
  WITH n LIMIT $exactMax + 1
  RETURN count(n) AS size
}
CALL (size) {
  WITH size WHERE size <= $exactMax
  MATCH (node:Revision:Current {subject: $subject})
  WHERE node.embedding IS NOT NULL AND size(node.embedding) = size($embedding)
    AND ($includeArchived OR NOT (coalesce(node.atomisedInto, 0) > 0 AND node.archivedAt IS NOT NULL))
  WITH node, vector.similarity.cosine(node.embedding, $embedding) AS semantic
  ORDER BY semantic DESC
  LIMIT $limit
  RETURN collect({atomId: node.atomId, rev: node.rev, semantic: semantic,
                  atomisedInto: node.atomisedInto, archivedAt: node.archivedAt,
                  text: node.text}) AS hits
}
RETURN size, hits
