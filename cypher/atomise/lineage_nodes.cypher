// Head facts of the given atoms (the nodes of a lineage graph or bundle).
UNWIND $atomIds AS aid
MATCH (a:Atom {subject: $subject, atomId: aid})-[:HEAD]->(h:Revision)
RETURN aid AS atomId, h.rev AS rev, h.state AS state, h.text AS text,
       coalesce(h.atomOf, a.atomOf) AS atomOf, h.atomisedInto AS atomisedInto,
       h.archivedAt AS archivedAt, h.atomIds AS atomIds, a.atomIndex AS atomIndex,
       a.createdAt AS createdAt
