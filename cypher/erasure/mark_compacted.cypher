// In the new store written by graphsvc compact: every purge before it is erased.
MERGE (m:GraphsvcMeta {key: 'erasure'})
SET m.lastCompactAt = $now, m.lastCompactPurges = coalesce(m.pendingPurges, 0),
    m.pendingPurges = 0
REMOVE m.oldestPendingAt
RETURN m.lastCompactPurges AS erasedPurges
