CREATE CONSTRAINT idempotency_key IF NOT EXISTS FOR (k:IdempotencyKey) REQUIRE (k.scopeKey) IS UNIQUE
