// One lock node per subject serialises the entity index's changes (graphsvc.store.entities).
CREATE CONSTRAINT entity_lock_key IF NOT EXISTS FOR (l:EntityLock) REQUIRE (l.subject) IS UNIQUE
