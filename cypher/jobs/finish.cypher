// Record a job's end: `done` with its outcome word, `failed` with an error code,
// or back to `pending` (a transient failure) with its lease released at $until.
// Only the holder of the lease records it; a worker that lost its lease (it ran
// past it and another took over) changes nothing.
MATCH (j:Job {jobId: $jobId, state: 'pending', leaseOwner: $owner})
SET j.state = $state,
    j.outcome = $outcome,
    j.lastError = $error,
    j.leaseOwner = CASE WHEN $state = 'pending' THEN null ELSE j.leaseOwner END,
    j.leaseUntil = $until,
    j.updatedAt = $nowIso
RETURN count(j) AS finished
