// Usage state of the caller's subject and policy (AV-3); few atoms have any, so
// this is cheaper than one lookup per retrieval-graph node.
MATCH (u:UsageState {subject: $subject, policy: $policy})
WHERE u.modelId = $modelId AND u.atomId IN $atomIds
RETURN u.atomId AS atomId, u.rev AS rev, u.state AS state
