UNWIND $updates AS x
MERGE (u:UsageState {subject: $subject, policy: $policy, atomId: x.atomId, rev: x.rev,
                     modelId: $modelId})
SET u.state = x.state, u.updatedAt = $now
RETURN count(u) AS updated
