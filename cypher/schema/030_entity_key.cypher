// The entity index (SPEC §16): one Entity per subject and normalised key.
CREATE CONSTRAINT entity_key IF NOT EXISTS FOR (e:Entity) REQUIRE (e.subject, e.key) IS UNIQUE
