// Which model the database's embeddings come from (GraphsvcMeta
// {key: 'embeddingModel'}; no record: a database from before models were
// recorded, whose embeddings are all-MiniLM-L6-v2), an unfinished `graphsvc
// reembed`, and whether any head holds an embedding.
OPTIONAL MATCH (m:GraphsvcMeta {key: 'embeddingModel'})
CALL () {
  OPTIONAL MATCH (r:Revision:Current)
  WHERE r.embedding IS NOT NULL
  WITH r LIMIT 1
  RETURN count(r) > 0 AS hasEmbeddings
}
RETURN m.name AS name, m.dimension AS dimension, m.migratingTo AS migratingTo,
       m.migrationId AS migrationId, hasEmbeddings
