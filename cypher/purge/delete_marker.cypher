MATCH (p:PurgeMarker {subject: $subject, atomId: $atomId})
DELETE p
RETURN count(*) AS deleted
