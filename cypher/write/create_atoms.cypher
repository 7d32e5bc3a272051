UNWIND $atomIds AS id
CREATE (:Atom {subject: $subject, atomId: id, headRev: 0, createdAt: $now})
