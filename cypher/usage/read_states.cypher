UNWIND $refs AS x
OPTIONAL MATCH (r:Revision {subject: $subject, atomId: x.atomId, rev: x.rev})
OPTIONAL MATCH (u:UsageState {subject: $subject, policy: $policy, atomId: x.atomId,
                              rev: x.rev, modelId: $modelId})
RETURN x.atomId AS atomId, x.rev AS rev, r IS NOT NULL AS found, u.state AS state
