MATCH (k:IdempotencyKey {scopeKey: $scopeKey})
SET k.state = 'committed', k.result = $result
