// One registration per serving process (ops/replicas.py).
CREATE CONSTRAINT service_replica_id IF NOT EXISTS FOR (r:ServiceReplica) REQUIRE (r.replicaId) IS UNIQUE
