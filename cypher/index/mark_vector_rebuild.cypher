// While this marker exists, search/vector_candidates returns no rows without
// calling the index (a query on a populating index blocks ~30 s, then fails), so
// searches use the exact scan until the rebuilt index is online.
MERGE (m:GraphsvcMeta {key: 'vectorIndex'})
SET m.since = $since
RETURN m.since AS since
