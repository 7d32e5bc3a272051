// Head facts of the given atoms as of $asOf (the shape of atomise/lineage_nodes):
// the newest revision created at or before $asOf; atoms with none by then are left
// out.
UNWIND $atomIds AS aid
MATCH (a:Atom {subject: $subject, atomId: aid})
CALL (a) {
  MATCH (h:Revision)
  WHERE h.subject = $subject AND h.atomId = a.atomId AND h.createdAt <= $asOf
  RETURN h ORDER BY h.rev DESC LIMIT 1
}
RETURN aid AS atomId, h.rev AS rev, h.state AS state, h.text AS text,
       coalesce(h.atomOf, a.atomOf) AS atomOf, h.atomisedInto AS atomisedInto,
       h.archivedAt AS archivedAt, h.atomIds AS atomIds, a.atomIndex AS atomIndex,
       a.createdAt AS createdAt
