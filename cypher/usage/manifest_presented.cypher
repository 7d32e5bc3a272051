OPTIONAL MATCH (m:Manifest {subject: $subject, manifestId: $manifestId})
OPTIONAL MATCH (m)-[:PRESENTS]->(r:Revision)
RETURN m IS NOT NULL AS found, collect({atomId: r.atomId, rev: r.rev}) AS presented
