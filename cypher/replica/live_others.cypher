// Replicas other than this one whose lease has not run out.
MATCH (r:ServiceReplica)
WHERE r.expiresAt > $now AND r.replicaId <> $replicaId
RETURN r.replicaId AS replicaId, r.fingerprint AS fingerprint, r.host AS host,
       r.pid AS pid, r.startedAt AS startedAt
ORDER BY r.startedAt
