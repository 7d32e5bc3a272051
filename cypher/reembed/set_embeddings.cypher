// One batch of the new model's embeddings, each tagged with the run's id (a rerun
// after a crash skips what is tagged). A head replaced meanwhile is not matched:
// its new revision was embedded by whoever wrote it, and is pending itself.
UNWIND $rows AS row
MATCH (r:Revision:Current {subject: row.subject, atomId: row.atomId, rev: row.rev})
WHERE r.embedding IS NOT NULL
SET r.embedding = row.embedding, r.reembedId = $migrationId
RETURN count(r) AS updated
