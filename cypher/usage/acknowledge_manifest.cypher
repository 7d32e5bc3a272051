MATCH (m:Manifest {subject: $subject, manifestId: $manifestId})
SET m.acknowledgedEventId = $eventId, m.acknowledgedAt = $now
RETURN count(m) AS acknowledged
