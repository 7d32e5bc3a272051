"""What one serving process keeps between requests, derived from Neo4j and kept at the
generation it was read at: the subjects' head mirrors (moved forward by the change
feed), their term statistics, the callers' usage states and the fulltext index's
analyzer. Only :mod:`graphsvc.store` talks to Neo4j; this package decides what is kept,
for how long, and when it is read again."""
