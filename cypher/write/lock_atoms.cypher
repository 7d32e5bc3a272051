// Writing a property takes the atom's write lock until commit, so concurrent
// batches on the same atom serialise here and the head check below sees the
// committed head (Neo4j is read-committed).
UNWIND $atomIds AS id
MATCH (a:Atom {subject: $subject, atomId: id})
SET a.lockedBy = $operationId
RETURN count(a) AS locked
