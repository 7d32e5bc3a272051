// The read's manifest (MAN-1): what was presented, as an observation record
// (auxiliary state, CORE-2). observe() resolves presentations through it.
CREATE (m:Manifest {subject: $subject, manifestId: $manifestId, digest: $digest,
                    createdAt: $now, policy: $policy, actorKind: $actorKind,
                    actorId: $actorId})
WITH m
CALL (m) {
  UNWIND $presented AS p
  MATCH (r:Revision {subject: $subject, atomId: p.atomId, rev: p.rev})
  CREATE (m)-[:PRESENTS]->(r)
  RETURN count(*) AS presented
}
// Observation records are kept for GRAPHSVC_MANIFEST_LIFETIME_S; each read removes
// a bounded number of expired ones of its subject, so the store does not grow
// with every read.
CALL (m) {
  MATCH (old:Manifest {subject: $subject})
  WHERE old.createdAt < $expiredBefore
  WITH old LIMIT 50
  DETACH DELETE old
  RETURN count(*) AS expired
}
RETURN m.manifestId AS manifestId
