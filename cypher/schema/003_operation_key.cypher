CREATE CONSTRAINT operation_key IF NOT EXISTS FOR (o:Operation) REQUIRE (o.subject, o.operationId) IS UNIQUE
