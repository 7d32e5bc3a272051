MATCH (u:UsageState)
WHERE u.subject = $subject AND u.atomId IN $atomIds
DETACH DELETE u
RETURN count(*) AS deleted
