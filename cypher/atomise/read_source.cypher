// The atom to atomise: its head revision, structural lineage facts and depth.
MATCH (a:Atom {subject: $subject, atomId: $atomId})-[:HEAD]->(h:Revision)
RETURN a.atomId AS atomId, h.rev AS rev, h.state AS state, h.text AS text,
       h.sources AS sources, coalesce(h.atomOf, a.atomOf) AS atomOf,
       coalesce(a.atomDepth, 0) AS depth, h.atomisedInto AS atomisedInto,
       h.archivedAt AS archivedAt, h.atomIds AS atomIds
