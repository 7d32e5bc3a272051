UNWIND $links AS l
MATCH (s:Revision {subject: $subject, atomId: l.srcAtomId, rev: l.srcRev})
MATCH (t:Atom {subject: $subject, atomId: l.atomId})
CREATE (s)-[:LINK {role: l.role, at: 'logical', required: l.required,
                   orderKey: l.orderKey, ordinal: l.ordinal, boundRev: l.rev}]->(t)
RETURN count(*) AS created
