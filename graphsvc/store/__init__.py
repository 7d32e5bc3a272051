"""Neo4j adapters: query loading, connection, schema, and the store."""
