CREATE CONSTRAINT evaluation_key IF NOT EXISTS FOR (e:Evaluation) REQUIRE (e.subject, e.evalId) IS UNIQUE
