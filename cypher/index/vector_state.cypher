// The vector index's state (ONLINE, POPULATING, FAILED); no row when it is absent.
SHOW INDEXES YIELD name, state, populationPercent
WHERE name = 'current_embedding'
RETURN state, populationPercent
