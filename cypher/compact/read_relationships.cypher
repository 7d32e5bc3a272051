// Every relationship, with the ids of its ends as read by compact/read_nodes.
MATCH (a)-[r]->(b)
RETURN id(a) AS s, id(b) AS t, type(r) AS type, properties(r) AS props
