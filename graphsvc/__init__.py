"""graphsvc: versioned, linked, cited knowledge atoms in Neo4j, served over GraphQL."""

__version__ = "0.1.0"
