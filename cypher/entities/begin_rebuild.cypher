// Start, or resume, a rebuild of the entity index by $version: an unfinished run to
// the same version keeps its id (its heads are done), any other gets $runId.
MERGE (m:GraphsvcMeta {key: 'entityExtractor'})
WITH m, m.migratingTo = $version AND m.runId IS NOT NULL AS resumed
SET m.runId = CASE WHEN resumed THEN m.runId ELSE $runId END,
    m.migratingTo = $version
RETURN m.runId AS runId, resumed
