OPTIONAL MATCH (k:IdempotencyKey {scopeKey: $scopeKey})
RETURN k.state AS state, k.fingerprint AS fingerprint, k.operationId AS operationId,
       k.result AS result, k.authGeneration AS authGeneration
