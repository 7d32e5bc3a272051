// Which extractor built the database's entity index (GraphsvcMeta {key:
// 'entityExtractor'}), an unfinished `graphsvc index rebuild --entities`, and
// whether any entity exists and any current head is not indexed by $version.
OPTIONAL MATCH (m:GraphsvcMeta {key: 'entityExtractor'})
CALL () {
  OPTIONAL MATCH (e:Entity)
  WITH e LIMIT 1
  RETURN count(e) > 0 AS hasEntities
}
CALL () {
  OPTIONAL MATCH (r:Revision:Current)
  WHERE coalesce(r.entityIndex, '') <> $version AND r.state = 'active'
    AND NOT (coalesce(r.atomisedInto, 0) > 0 AND r.archivedAt IS NOT NULL)
  WITH r LIMIT 1
  RETURN count(r) > 0 AS unindexed
}
RETURN m.version AS version, m.migratingTo AS migratingTo, m.runId AS runId,
       hasEntities, unindexed
