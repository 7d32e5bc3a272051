OPTIONAL MATCH (m:GraphsvcMeta {key: 'schema'})
RETURN m.version AS version
