// A running job's lease, extended while its worker is alive.
MATCH (j:Job {jobId: $jobId, state: 'pending', leaseOwner: $owner})
SET j.leaseUntil = $until
RETURN count(j) AS renewed
