MATCH (p:PurgeMarker {subject: $subject, atomId: $atomId})
SET p.step = $step, p.plan = $plan
RETURN p.step AS step
