// Every mention held by a revision of these atoms (the previous head of a revised,
// retired or archived atom, or a purged atom's revisions) is removed (ENT-2, ENT-3),
// with the tentative mentions kept on them (ENT-6); the keys of the entities they
// named come back, to be refreshed.
CALL () {
  UNWIND $atomIds AS aid
  MATCH (:Atom {subject: $subject, atomId: aid})-[:HAS_REVISION]->(r:Revision)
  WHERE r.tentative IS NOT NULL
  REMOVE r.tentative
  RETURN count(*) AS cleared
}
CALL () {
  UNWIND $atomIds AS aid
  MATCH (:Atom {subject: $subject, atomId: aid})-[:HAS_REVISION]->(r:Revision)-[m:MENTIONS]->(e:Entity)
  WITH e.key AS key, m
  DELETE m
  RETURN collect(DISTINCT key) AS keys
}
RETURN keys
