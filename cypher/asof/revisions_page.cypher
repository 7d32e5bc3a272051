// One page of each given atom's revisions as of $asOf, newest first (keyset: revs
// below k.before): only revisions created at or before $asOf; `head` marks the head
// as of then. k.limit is the page size plus one; $cap, the largest k.limit of the
// batch, bounds what one key collects.
UNWIND $keys AS k
MATCH (a:Atom {subject: $subject, atomId: k.atomId})
CALL (a, k) {
  MATCH (r:Revision)
  WHERE r.subject = $subject AND r.atomId = a.atomId AND r.createdAt <= $asOf
  WITH k, r ORDER BY r.rev DESC
  WITH k, collect(r) AS revs
  WITH k, revs, CASE WHEN size(revs) = 0 THEN null ELSE revs[0].rev END AS headRev
  UNWIND revs AS r
  WITH k, r, headRev
  WHERE k.before IS NULL OR r.rev < k.before
  WITH k, r, headRev ORDER BY r.rev DESC
  LIMIT $cap
  WITH k, collect(r {.atomId, .rev, .state, .text, .tokens, .digest, .createdAt, .actorKind,
                    .actorId, .operationId, .atomisedInto, .archivedAt,
                    atomOf: coalesce(r.atomOf, a.atomOf),
                    head: r.rev = headRev}) AS found
  RETURN found[0..k.limit] AS revisions
}
RETURN k.key AS key, revisions
