// Every node of the database, for graphsvc compact: a logical copy into a new
// store holds live records only (docs/erasure.md). id() is the copy's join key.
MATCH (n)
RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props
