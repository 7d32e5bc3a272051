// The managed Neo4j answers a query (start-up readiness probe).
RETURN 1
