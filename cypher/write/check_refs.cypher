UNWIND $refs AS x
OPTIONAL MATCH (r:Revision {subject: $subject, atomId: x.atomId, rev: x.rev})
RETURN x.atomId AS atomId, x.rev AS rev, r IS NOT NULL AS found,
       CASE WHEN x.wantText THEN r.text ELSE null END AS text, r.digest AS digest
