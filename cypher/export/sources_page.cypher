// One page of the subject's sources cited by any revision, in sourceKey order
// after $after (keyset paging).
MATCH (s:Source {subject: $subject})
WHERE s.sourceKey > $after AND EXISTS { MATCH (:Revision {subject: $subject})-[:CITES]->(s) }
RETURN s.sourceKey AS sourceKey, s.uri AS uri, s.version AS version, s.digest AS digest
ORDER BY sourceKey
LIMIT $limit
