// eventId dedup (AV-3, MAN-1): the unique (subject, eventId) makes a concurrent
// duplicate wait for the first, then see it; only the creator gets fresh = true.
MERGE (e:UsageEvent {subject: $subject, eventId: $eventId})
  ON CREATE SET e.createdAt = $now, e.fresh = true, e.policy = $policy
WITH e, coalesce(e.fresh, false) AS fresh
REMOVE e.fresh
RETURN fresh
