// Every usage state of the caller's subject, policy and model (AV-3), for the
// process's kept copy (graphsvc.store.usage_shelf): at most $max + 1 rows, so a
// subject with more than $max is recognised and read per search instead.
MATCH (u:UsageState {subject: $subject, policy: $policy})
WHERE u.modelId = $modelId
WITH u LIMIT $max + 1
RETURN u.atomId AS atomId, u.rev AS rev, u.state AS state
