// The superseded revisions (all but the head) of the given atoms, oldest first.
UNWIND $atomIds AS aid
MATCH (a:Atom {subject: $subject, atomId: aid})-[:HAS_REVISION]->(r:Revision)
WHERE r.rev < a.headRev
RETURN r.atomId AS atomId, r.rev AS rev, r.state AS state, r.text AS text,
       r.tokens AS tokens, r.createdAt AS createdAt, r.actorKind AS actorKind,
       r.actorId AS actorId
ORDER BY atomId, rev
