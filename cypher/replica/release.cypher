// A replica that stops cleanly gives its lease back.
MATCH (r:ServiceReplica {replicaId: $replicaId})
DETACH DELETE r
RETURN count(*) AS released
