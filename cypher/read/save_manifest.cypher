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
RETURN m.manifestId AS manifestId
