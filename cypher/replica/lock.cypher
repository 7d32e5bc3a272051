// Serialises replica registrations: the write lock on this node is held until the
// registering transaction commits, so two replicas starting at once see each other.
MERGE (m:GraphsvcMeta {key: 'replicas'})
SET m.lockedAt = $now
RETURN m.key AS key
