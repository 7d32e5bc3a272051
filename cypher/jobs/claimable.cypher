// Pending jobs no live process holds (never claimed, or its lease ran out),
// oldest first. Claiming them is a second step (jobs/claim) under the job's lock.
MATCH (j:Job {state: 'pending'})
WHERE j.leaseUntil IS NULL OR j.leaseUntil < $now
RETURN j.jobId AS jobId
ORDER BY j.createdAt, j.jobId
LIMIT $limit
