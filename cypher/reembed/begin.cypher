// Start (or resume) moving the embeddings to model $target: the record names the
// target and the run's id until every head carries it (reembed/finish).
MERGE (m:GraphsvcMeta {key: 'embeddingModel'})
ON CREATE SET m.name = $source, m.dimension = $sourceDimension
SET m.migratingTo = $target, m.migrationId = coalesce(m.migrationId, $migrationId)
RETURN m.migrationId AS migrationId
