// The given atoms as of $asOf (docs/time-travel.md): each with its head as of then,
// the newest revision created at or before $asOf (a retire or an archive is a
// revision too, so the head's state is the state as of then). An atom with no
// revision by then did not exist yet and is missing, like a purged atom or another
// subject's (no existence oracle). The range on createdAt seeks the
// (subject, atomId, createdAt) index.
UNWIND $atomIds AS aid
MATCH (a:Atom {subject: $subject, atomId: aid})
CALL (a) {
  MATCH (r:Revision)
  WHERE r.subject = $subject AND r.atomId = a.atomId AND r.createdAt <= $asOf
  RETURN r ORDER BY r.rev DESC LIMIT 1
}
RETURN a.atomId AS atomId, a.createdAt AS createdAt,
       r {.atomId, .rev, .state, .text, .tokens, .digest, .createdAt, .actorKind, .actorId,
          .operationId, .atomisedInto, .archivedAt, atomOf: coalesce(r.atomOf, a.atomOf),
          head: true} AS head
