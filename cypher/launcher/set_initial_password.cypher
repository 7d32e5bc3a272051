// A fresh database has user neo4j/neo4j with "change required"; the only statement
// it may run is this one, against the system database.
ALTER CURRENT USER SET PASSWORD FROM $old TO $new
