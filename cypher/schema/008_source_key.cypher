CREATE CONSTRAINT source_key IF NOT EXISTS FOR (s:Source) REQUIRE (s.subject, s.sourceKey) IS UNIQUE
