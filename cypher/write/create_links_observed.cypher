UNWIND $links AS l
MATCH (s:Revision {subject: $subject, atomId: l.srcAtomId, rev: l.srcRev})
MATCH (t:Revision {subject: $subject, atomId: l.atomId, rev: l.rev})
CREATE (s)-[:LINK {role: l.role, at: 'observed', required: l.required,
                   orderKey: l.orderKey, ordinal: l.ordinal}]->(t)
RETURN count(*) AS created
