// What the vector index holds: every current revision with an embedding.
MATCH (r:Current)
WHERE r.embedding IS NOT NULL
RETURN count(r) AS entries
