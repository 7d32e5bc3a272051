MERGE (m:GraphsvcMeta {key: 'schema'})
SET m.version = $version, m.files = $files
RETURN m.version AS version
