MATCH (u:UsageState {subject: $subject, policy: $policy})
WHERE $atomId IS NULL OR u.atomId = $atomId
DETACH DELETE u
RETURN count(*) AS reset
