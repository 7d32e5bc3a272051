UNWIND $refs AS x
MATCH (r:Revision {subject: $subject, atomId: x.atomId, rev: x.rev})
RETURN r.atomId AS atomId, r.rev AS rev, r.text AS text
