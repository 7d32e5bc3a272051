// One page of the subject's change feed in sequence (commit) order: records with a
// time in [$since, $until) (either bound may be null) after sequence number $after,
// at most $limit (the page size plus one, so the caller knows a next page exists).
// The range on seq seeks the (subject, seq) key.
MATCH (c:Change)
WHERE c.subject = $subject AND c.seq > coalesce($after, 0)
  AND ($since IS NULL OR c.at >= $since) AND ($until IS NULL OR c.at < $until)
WITH c ORDER BY c.subject, c.seq
LIMIT $limit
RETURN c.seq AS seq, c.operationId AS operationId, c.kind AS kind,
       c.actorKind AS actorKind, c.actorId AS actorId, c.at AS at, c.created AS created,
       c.revised AS revised, c.retired AS retired, c.archived AS archived,
       c.purged AS purged, coalesce(c.redacted, 0) AS redacted
