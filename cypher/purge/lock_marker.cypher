// Takes the marker's write lock for one step, so a step runs exactly once even
// when two callers resume the same purge at the same time.
OPTIONAL MATCH (p:PurgeMarker {subject: $subject, atomId: $atomId})
FOREACH (_ IN CASE WHEN p IS NULL THEN [] ELSE [1] END | SET p.touchedAt = $now)
RETURN p IS NOT NULL AS found, p.step AS step, p.plan AS plan
