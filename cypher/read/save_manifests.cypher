// Reads' manifests (MAN-1), several in one transaction: whatever queued while the
// previous batch committed (store/manifests: group commit). Each is what its read
// presented, as an observation record (auxiliary state, CORE-2); observe() resolves
// presentations through it. The batch commits whole or not at all: a read answers
// only after its manifest's batch committed (or, after a failed batch, its own
// transaction alone did).
UNWIND $manifests AS n
CREATE (m:Manifest {subject: n.subject, manifestId: n.manifestId, digest: n.digest,
                    createdAt: n.now, policy: n.policy, actorKind: n.actorKind,
                    actorId: n.actorId})
WITH m, n
CALL (m, n) {
  UNWIND n.presented AS p
  MATCH (r:Revision {subject: n.subject, atomId: p.atomId, rev: p.rev})
  CREATE (m)-[:PRESENTS]->(r)
  RETURN count(*) AS presented
}
// Observation records are kept for GRAPHSVC_MANIFEST_LIFETIME_S; each batch removes
// up to 50 expired ones of each subject it saved to (more than a batch adds), so the
// store does not grow with every read.
WITH n.subject AS subject, min(n.expiredBefore) AS expiredBefore, count(*) AS saved
CALL (subject, expiredBefore) {
  MATCH (old:Manifest {subject: subject})
  WHERE old.createdAt < expiredBefore
  WITH old LIMIT 50
  DETACH DELETE old
  RETURN count(*) AS expired
}
RETURN sum(saved) AS saved, sum(expired) AS expired
