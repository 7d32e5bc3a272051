// Jobs of one subject (or of every subject when $subject is null), newest first.
MATCH (j:Job)
WHERE ($subject IS NULL OR j.subject = $subject) AND ($state IS NULL OR j.state = $state)
RETURN j.jobId AS jobId, j.subject AS subject, j.kind AS kind, j.atomId AS atomId,
       j.rev AS rev, j.state AS state, j.attempts AS attempts, j.outcome AS outcome,
       j.lastError AS lastError, j.createdAt AS createdAt, j.updatedAt AS updatedAt,
       j.leaseOwner AS leaseOwner, j.leaseUntil AS leaseUntil
ORDER BY j.createdAt DESC, j.jobId DESC
LIMIT $limit
