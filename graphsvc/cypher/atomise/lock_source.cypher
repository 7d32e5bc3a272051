// Writing a property takes the atom's write lock until commit, so a concurrent
// write or atomisation of the same atom serialises here; the head read after the
// lock is the committed one (CAS on the parent head).
MATCH (a:Atom {subject: $subject, atomId: $atomId})
SET a.lockedBy = $operationId
WITH a
MATCH (a)-[:HEAD]->(h:Revision)
RETURN h.rev AS headRev, h.state AS state
