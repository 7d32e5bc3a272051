// One page of each given atom's revisions, newest first (keyset: revs below
// k.before). k.limit is the page size plus one (the extra row says "next page");
// $cap, the largest k.limit of the batch, bounds what one key collects.
UNWIND $keys AS k
MATCH (a:Atom {subject: $subject, atomId: k.atomId})
CALL (a, k) {
  MATCH (a)-[:HAS_REVISION]->(r:Revision)
  WHERE k.before IS NULL OR r.rev < k.before
  WITH k, r ORDER BY r.rev DESC
  LIMIT $cap
  WITH k, collect(r {.atomId, .rev, .state, .text, .tokens, .digest, .createdAt, .actorKind,
                    .actorId, .operationId, .atomisedInto, .archivedAt,
                    atomOf: coalesce(r.atomOf, a.atomOf),
                    head: a.headRev = r.rev}) AS found
  RETURN found[0..k.limit] AS revisions
}
RETURN k.key AS key, revisions
