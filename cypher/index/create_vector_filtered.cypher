// The vector index on Neo4j 2026.x and later (Cypher 25), in place of
// schema/013_current_embedding there: the subject is a filter property of the index,
// so search/vector_candidates_filtered finds a subject's nearest neighbours inside
// the index instead of filtering the shared index's global top k afterwards.
CYPHER 25
CREATE VECTOR INDEX current_embedding IF NOT EXISTS
FOR (r:Current) ON r.embedding
WITH [r.subject]
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}
