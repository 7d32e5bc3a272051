OPTIONAL MATCH (p:PurgeMarker {subject: $subject})
RETURN count(p) AS pending
