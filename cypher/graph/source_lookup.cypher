// The subject's sources with this uri and version (a null $version matches sources
// declared without one), several when citations gave different digests; the one
// with the given $digest first, then by digest.
MATCH (s:Source {subject: $subject, uri: $uri})
WHERE s.sourceKey IS NOT NULL
  AND coalesce(s.version, '') = coalesce($version, '')
  AND ($digest IS NULL OR s.digest = $digest)
RETURN s.sourceKey AS sourceKey, s.uri AS uri, s.version AS version, s.digest AS digest
ORDER BY s.digest
LIMIT 1
