// One change record per subject and sequence number; pages seek it in seq order.
CREATE CONSTRAINT change_key IF NOT EXISTS FOR (c:Change) REQUIRE (c.subject, c.seq) IS UNIQUE
