// Cosine similarity (Neo4j's [0, 1] form) of the query to given current heads:
// the semantic signal of lexical candidates the vector index did not return.
UNWIND $atomIds AS aid
MATCH (:Atom {subject: $subject, atomId: aid})-[:HEAD]->(node:Current)
WHERE node.embedding IS NOT NULL
RETURN node.atomId AS atomId, vector.similarity.cosine(node.embedding, $embedding) AS semantic
