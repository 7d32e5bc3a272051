// A failed job back to pending with a fresh attempt budget (`graphsvc jobs retry`).
MATCH (j:Job {jobId: $jobId})
WHERE $subject IS NULL OR j.subject = $subject
SET j.lockedBy = $owner
WITH j
WHERE j.state = 'failed'
SET j.state = 'pending', j.attempts = 0, j.leaseOwner = null, j.leaseUntil = null,
    j.updatedAt = $nowIso
RETURN j.jobId AS jobId
