// The revisions of the given atoms before their head as of $asOf (created at or
// before it), oldest first; with $since only those created at or after $since.
UNWIND $atomIds AS aid
MATCH (a:Atom {subject: $subject, atomId: aid})
CALL (a) {
  MATCH (h:Revision)
  WHERE h.subject = $subject AND h.atomId = a.atomId AND h.createdAt <= $asOf
  RETURN max(h.rev) AS headRev
}
MATCH (a)-[:HAS_REVISION]->(r:Revision)
WHERE r.rev < headRev AND ($since IS NULL OR r.createdAt >= $since)
RETURN r.atomId AS atomId, r.rev AS rev, r.state AS state, r.text AS text,
       r.tokens AS tokens, r.createdAt AS createdAt, r.actorKind AS actorKind,
       r.actorId AS actorId
ORDER BY atomId, rev
