// Durable background jobs (the outbox of deferred atomisation and embeddings).
CREATE CONSTRAINT job_key IF NOT EXISTS FOR (j:Job) REQUIRE (j.jobId) IS UNIQUE
