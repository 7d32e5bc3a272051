// One batch of the new model's embeddings, each tagged with the run's id (a rerun
// after a crash skips what is tagged). A head replaced meanwhile is not matched:
// its new revision was embedded by whoever wrote it, and is pending itself. The
// embedding generation moves with the batch: a process's mirror of a subject's heads
// (graphsvc.store.head_mirror) follows the change feed, which records no change here.
UNWIND $rows AS row
MATCH (r:Revision:Current {subject: row.subject, atomId: row.atomId, rev: row.rev})
WHERE r.embedding IS NOT NULL
SET r.embedding = row.embedding, r.reembedId = $migrationId
WITH count(r) AS updated
CALL (updated) {
  WITH updated WHERE updated > 0
  MERGE (g:GraphsvcMeta {key: 'embeddingGeneration'})
  SET g.value = coalesce(g.value, 0) + 1
}
RETURN updated
