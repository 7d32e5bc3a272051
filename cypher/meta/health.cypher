// The server's name, version and edition, and the schema version the last
// apply_schema recorded (null before the first): /readyz and { health } in one
// round trip.
CALL dbms.components() YIELD name, versions, edition
OPTIONAL MATCH (m:GraphsvcMeta {key: 'schema'})
RETURN name, versions[0] AS version, edition, m.version AS schemaVersion
