// A head whose embedding was deferred for synchronous atomisation that then did
// not happen gets its embedding now (index data only; the body is unchanged).
MATCH (r:Revision:Current {subject: $subject, atomId: $atomId, rev: $rev})
WHERE r.embedding IS NULL
SET r.embedding = $embedding
RETURN count(r) AS embedded
