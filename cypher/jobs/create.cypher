// Jobs written by the transaction whose write causes them (the outbox): they
// commit, or vanish, with it. A job made by a process that will run it itself
// carries that process as `leaseOwner` until `leaseUntil`; another worker takes
// it only after the lease ran out (the process died).
UNWIND $jobs AS j
CREATE (:Job {
  jobId: j.jobId, subject: $subject, policy: $policy, kind: j.kind,
  atomId: j.atomId, rev: j.rev, maxAtomTokens: j.maxAtomTokens,
  actorKind: $actorKind, actorId: $actorId, authGeneration: $authGeneration,
  operationId: $operationId, state: 'pending', attempts: 0,
  leaseOwner: j.leaseOwner, leaseUntil: j.leaseUntil,
  createdAt: $now, updatedAt: $now, outcome: null, lastError: null
})
RETURN count(*) AS created
