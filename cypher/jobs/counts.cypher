// How many jobs are in each state, for one subject or all.
MATCH (j:Job)
WHERE $subject IS NULL OR j.subject = $subject
RETURN j.state AS state, count(*) AS jobs
