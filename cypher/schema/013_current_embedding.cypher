CREATE VECTOR INDEX current_embedding IF NOT EXISTS
FOR (r:Current) ON (r.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}
