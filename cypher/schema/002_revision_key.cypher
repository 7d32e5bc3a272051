CREATE CONSTRAINT revision_key IF NOT EXISTS FOR (r:Revision) REQUIRE (r.subject, r.atomId, r.rev) IS UNIQUE
