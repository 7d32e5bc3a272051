OPTIONAL MATCH (m:GraphsvcMeta {key: 'erasure'})
RETURN coalesce(m.pendingPurges, 0) AS pendingPurges, m.oldestPendingAt AS oldestPendingAt,
       m.lastPurgeAt AS lastPurgeAt, m.lastCompactAt AS lastCompactAt
