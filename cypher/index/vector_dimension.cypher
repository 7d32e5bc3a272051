// The vector index's dimension; no row when the index is absent.
SHOW INDEXES YIELD name, options
WHERE name = 'current_embedding'
RETURN options.indexConfig.`vector.dimensions` AS dimension
