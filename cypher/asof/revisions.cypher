// The given revisions of the subject as of $asOf: a revision created after $asOf did
// not exist yet and is missing; `head` says it was its atom's head as of then.
UNWIND $refs AS x
MATCH (a:Atom {subject: $subject, atomId: x.atomId})-[:HAS_REVISION]->
      (r:Revision {rev: x.rev})
WHERE r.createdAt <= $asOf
CALL (a, r) {
  OPTIONAL MATCH (n:Revision)
  WHERE n.subject = $subject AND n.atomId = a.atomId AND n.createdAt <= $asOf
        AND n.rev > r.rev
  RETURN count(n) = 0 AS head
}
RETURN r {.atomId, .rev, .state, .text, .tokens, .digest, .createdAt, .actorKind, .actorId,
          .operationId, .atomisedInto, .archivedAt, atomOf: coalesce(r.atomOf, a.atomOf),
          head: head} AS revision
