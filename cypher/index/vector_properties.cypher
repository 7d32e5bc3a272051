// The properties of the vector index: ['embedding'] for the index of
// schema/013_current_embedding, ['embedding', 'subject'] for the one of
// index/create_vector_filtered (Neo4j 2026.x); no row when it is absent.
SHOW INDEXES YIELD name, properties
WHERE name = 'current_embedding'
RETURN properties
