// New usage states of one subject, policy and model (AV-3). The subject's usage
// generation moves in the same transaction: processes keep a copy of the states
// (graphsvc.store.usage_shelf) and read them again when it moved
// (search/mirror_state returns it).
MERGE (s:SubjectState {subject: $subject})
SET s.usageGeneration = coalesce(s.usageGeneration, 0) + 1
WITH s
UNWIND $updates AS x
MERGE (u:UsageState {subject: $subject, policy: $policy, atomId: x.atomId, rev: x.rev,
                     modelId: $modelId})
SET u.state = x.state, u.updatedAt = $now
RETURN count(u) AS updated
