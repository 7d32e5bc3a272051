// A head whose embedding was deferred (a synchronous atomisation was about to
// archive it): its text, when it still needs an embedding.
MATCH (r:Revision:Current {subject: $subject, atomId: $atomId, rev: $rev})
WHERE r.embedding IS NULL AND r.state = 'active'
  AND NOT (coalesce(r.atomisedInto, 0) > 0 AND r.archivedAt IS NOT NULL)
RETURN r.text AS text
