UNWIND $atomIds AS id
OPTIONAL MATCH (r:Revision {subject: $subject, atomId: id})
RETURN count(r) AS revisions
