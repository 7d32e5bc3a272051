// Record the model the database's embeddings come from (ends a reembed).
MERGE (m:GraphsvcMeta {key: 'embeddingModel'})
SET m.name = $model, m.dimension = $dimension
REMOVE m.migratingTo, m.migrationId
