// Register or renew this replica's lease; registrations expired long ago go.
MERGE (r:ServiceReplica {replicaId: $replicaId})
ON CREATE SET r.startedAt = $now, r.host = $host, r.pid = $pid
SET r.fingerprint = $fingerprint, r.expiresAt = $now + $leaseS
WITH r
CALL {
  MATCH (dead:ServiceReplica)
  WHERE dead.expiresAt < $now - $forgetS
  DETACH DELETE dead
}
RETURN r.expiresAt AS expiresAt
