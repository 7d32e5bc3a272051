// The rebuilt fulltext index is online: searches use it again. The index generation
// moves, so a process that kept the old index's analyzer (store/retrieval) reads it
// again, even if it never saw the marker.
OPTIONAL MATCH (m:GraphsvcMeta {key: 'fulltextIndex'})
DELETE m
WITH count(m) AS cleared
MERGE (g:GraphsvcMeta {key: 'fulltextGeneration'})
SET g.value = coalesce(g.value, 0) + 1
RETURN cleared
