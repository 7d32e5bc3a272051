// MERGE on the unique scopeKey serialises concurrent retries: a second writer waits
// for the first to commit, then sees its record instead of creating one.
MERGE (k:IdempotencyKey {scopeKey: $scopeKey})
  ON CREATE SET k.subject = $subject, k.state = 'pending', k.fingerprint = $fingerprint,
                k.operationId = $operationId, k.authGeneration = $authGeneration,
                k.createdAt = $now
RETURN k.state AS state, k.fingerprint AS fingerprint, k.operationId AS operationId,
       k.result AS result, k.authGeneration AS authGeneration
