// IDEM-5: an idempotency record whose result names a purged atom keeps only a
// digest-free tombstone (a fingerprint would let someone confirm guessed text).
MATCH (k:IdempotencyKey {subject: $subject})
WHERE k.result IS NOT NULL
  AND any(id IN $atomIds WHERE k.result CONTAINS ('"' + id + '"'))
SET k = {scopeKey: k.scopeKey, subject: k.subject, state: 'purged'}
RETURN count(k) AS tombstoned
