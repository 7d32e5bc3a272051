// The fulltext index's state (ONLINE, POPULATING, FAILED) and analyzer; no row when
// it is absent.
SHOW INDEXES YIELD name, state, populationPercent, options
WHERE name = 'current_text'
RETURN state, populationPercent, options.indexConfig['fulltext.analyzer'] AS analyzer
