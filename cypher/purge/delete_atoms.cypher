// Every revision (the whole history) and the atom itself; DETACH drops their
// links, citations, provenance and lineage edges.
UNWIND $atomIds AS id
CALL (id) {
  MATCH (r:Revision {subject: $subject, atomId: id})
  DETACH DELETE r
  RETURN count(*) AS revisions
}
CALL (id) {
  MATCH (a:Atom {subject: $subject, atomId: id})
  DETACH DELETE a
  RETURN count(*) AS atoms
}
RETURN sum(revisions) AS revisions, sum(atoms) AS atoms
