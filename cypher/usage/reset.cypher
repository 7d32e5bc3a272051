// Delete the usage states of one policy (one atom's or all) and move the subject's
// usage generation, as usage/write_states does.
MERGE (s:SubjectState {subject: $subject})
SET s.usageGeneration = coalesce(s.usageGeneration, 0) + 1
WITH s
CALL (s) {
  MATCH (u:UsageState {subject: $subject, policy: $policy})
  WHERE $atomId IS NULL OR u.atomId = $atomId
  DETACH DELETE u
  RETURN count(*) AS reset
}
RETURN reset
