UNWIND $atomIds AS id
OPTIONAL MATCH (a:Atom {subject: $subject, atomId: id})
RETURN id AS atomId, a.headRev AS headRev
