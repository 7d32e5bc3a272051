SHOW INDEXES YIELD name, state, populationPercent
RETURN name, state, populationPercent
