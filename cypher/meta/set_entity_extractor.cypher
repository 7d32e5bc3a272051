// Record the extractor the entity index is built by (ends a rebuild).
MERGE (m:GraphsvcMeta {key: 'entityExtractor'})
SET m.version = $version
REMOVE m.migratingTo, m.runId
