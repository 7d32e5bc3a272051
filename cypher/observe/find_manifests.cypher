UNWIND $manifestIds AS mid
OPTIONAL MATCH (m:Manifest {subject: $subject, manifestId: mid})
OPTIONAL MATCH (m)-[:PRESENTS]->(r:Revision)
RETURN mid AS manifestId, m IS NOT NULL AS found,
       collect({atomId: r.atomId, rev: r.rev}) AS presented
