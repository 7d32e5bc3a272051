// What a search checks first when it answers its candidate legs from the process's
// mirror of the subject's heads (graphsvc.store.head_mirror), in one round trip:
// the columns of search/subject_state (a purge pending, the purge epoch, the schema
// version), whether `graphsvc index rebuild --fulltext` runs and the fulltext
// index's generation (search/fulltext_candidates returns the same), and the
// generation the mirror is kept at: the subject's change sequence (every write,
// revise, retire, archive and atomisation moves it, cypher/changes/record.cypher),
// its purge epoch, and the embedding generation (an embedding set on a head that
// already exists: atomise/embed_head, reembed/set_embeddings) and the entity
// generation (each batch of `graphsvc index rebuild --entities`,
// entities/move_generation). `usageGeneration` moves with every usage state
// recorded or reset (usage/write_states, usage/reset): graphsvc.store.usage_shelf.
OPTIONAL MATCH (p:PurgeMarker {subject: $subject})
WITH count(p) > 0 AS pending
OPTIONAL MATCH (s:SubjectState {subject: $subject})
OPTIONAL MATCH (m:GraphsvcMeta {key: 'schema'})
OPTIONAL MATCH (f:GraphsvcMeta {key: 'fulltextIndex'})
OPTIONAL MATCH (g:GraphsvcMeta {key: 'fulltextGeneration'})
OPTIONAL MATCH (e:GraphsvcMeta {key: 'embeddingGeneration'})
OPTIONAL MATCH (x:GraphsvcMeta {key: 'entityGeneration'})
OPTIONAL MATCH (cs:ChangeSequence {subject: $subject})
RETURN pending, coalesce(s.purgeEpoch, 0) AS purgeEpoch, m.version AS schemaVersion,
       f IS NOT NULL AS rebuilding, coalesce(g.value, 0) AS fulltextGeneration,
       coalesce(cs.last, 0) AS changeSeq, coalesce(e.value, 0) AS embeddingGeneration,
       coalesce(x.value, 0) AS entityGeneration,
       coalesce(s.usageGeneration, 0) AS usageGeneration
