// A finished purge whose bytes may still be on disk until the next graphsvc compact.
MERGE (m:GraphsvcMeta {key: 'erasure'})
SET m.pendingPurges = coalesce(m.pendingPurges, 0) + 1,
    m.oldestPendingAt = coalesce(m.oldestPendingAt, $now),
    m.lastPurgeAt = $now
RETURN m.pendingPurges AS pendingPurges
