// While this marker exists, search/fulltext_candidates returns no hits without
// calling the fulltext index (a populating index would answer with a part of the
// subject's atoms), so searches rank by the semantic signal alone (ACT-1: the
// lexical signal is missing) until the rebuilt index is online.
MERGE (m:GraphsvcMeta {key: 'fulltextIndex'})
SET m.since = $since
RETURN m.since AS since
