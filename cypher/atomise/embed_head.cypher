// A head whose embedding was deferred for synchronous atomisation that then did
// not happen gets its embedding now (index data only; the body is unchanged). The
// embedding generation moves with it: a process's mirror of the subject's heads
// (graphsvc.store.head_mirror) follows the change feed, which records no change here.
MATCH (r:Revision:Current {subject: $subject, atomId: $atomId, rev: $rev})
WHERE r.embedding IS NULL
SET r.embedding = $embedding
WITH count(r) AS embedded
CALL (embedded) {
  WITH embedded WHERE embedded > 0
  MERGE (g:GraphsvcMeta {key: 'embeddingGeneration'})
  SET g.value = coalesce(g.value, 0) + 1
}
RETURN embedded
