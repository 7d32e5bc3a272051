// The type comes as data ($(...), Neo4j 5.26), never as query text.
UNWIND $rows AS row
MATCH (a) WHERE id(a) = row.s
MATCH (b) WHERE id(b) = row.t
CREATE (a)-[r:$(row.type)]->(b)
SET r = row.props
RETURN count(r) AS created
