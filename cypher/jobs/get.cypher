// One job (to tell "no such job" from "not failed" when a retry changes nothing).
MATCH (j:Job {jobId: $jobId})
WHERE $subject IS NULL OR j.subject = $subject
RETURN j.state AS state
