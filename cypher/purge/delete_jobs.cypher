// Background jobs about purged atoms go with them (a job names its atom).
MATCH (j:Job)
WHERE j.subject = $subject AND j.atomId IN $atomIds
DETACH DELETE j
RETURN count(*) AS deleted
