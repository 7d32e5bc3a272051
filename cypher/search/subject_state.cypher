// What every evaluation and cursor checks first, in one round trip: whether a
// purge of the subject is unfinished (LNK-6), and the index generation a cursor
// binds (the subject's purge epoch and the schema version, CUR-2).
OPTIONAL MATCH (p:PurgeMarker {subject: $subject})
WITH count(p) > 0 AS pending
OPTIONAL MATCH (s:SubjectState {subject: $subject})
OPTIONAL MATCH (m:GraphsvcMeta {key: 'schema'})
RETURN pending, coalesce(s.purgeEpoch, 0) AS purgeEpoch, m.version AS schemaVersion
