// Labels come as data ($(...), Neo4j 5.26), never as query text.
UNWIND $rows AS row
CREATE (n:$(row.labels))
SET n = row.props
RETURN row.id AS old, id(n) AS new
