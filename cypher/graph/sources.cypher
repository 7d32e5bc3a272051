// The given sources of the subject by their key (DataLoader batch).
UNWIND $keys AS key
MATCH (s:Source {subject: $subject, sourceKey: key})
RETURN s.sourceKey AS sourceKey, s.uri AS uri, s.version AS version, s.digest AS digest
