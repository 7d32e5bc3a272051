// Take one job for $owner until $until. Writing `lockedBy` first takes the job's
// write lock, so the checks below read what a concurrent claimer committed
// (Neo4j is read-committed): of two workers, one gets the job. A job may be
// claimed when it is pending and either unheld, held by $owner, or its lease ran out.
MATCH (j:Job {jobId: $jobId})
SET j.lockedBy = $owner
WITH j
WHERE j.state = 'pending'
  AND (j.leaseOwner IS NULL OR j.leaseOwner = $owner OR j.leaseUntil < $now)
SET j.attempts = j.attempts + 1,
    j.leaseOwner = $owner,
    j.leaseUntil = $until,
    j.updatedAt = $nowIso
RETURN j.jobId AS jobId, j.kind AS kind, j.subject AS subject, j.policy AS policy,
       j.atomId AS atomId, j.rev AS rev, j.maxAtomTokens AS maxAtomTokens,
       j.actorKind AS actorKind, j.actorId AS actorId,
       j.authGeneration AS authGeneration, j.attempts AS attempts
