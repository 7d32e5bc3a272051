// A batch of `graphsvc index rebuild --entities`, or an ENT-6 resolution that moves
// mentions of heads the write did not touch, changes heads' mentions without a
// change-feed record: the entity generation moves in the batch's transaction, so
// every process's mirror of a subject's heads (graphsvc.store.head_mirror) reads the
// heads again at its next search.
MERGE (g:GraphsvcMeta {key: 'entityGeneration'})
SET g.value = coalesce(g.value, 0) + 1
RETURN g.value AS generation
