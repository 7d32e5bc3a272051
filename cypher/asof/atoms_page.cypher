// One page of the subject's atoms as of $asOf in atomId order (keyset: ids after
// $after): atoms with a revision created at or before $asOf, each with its head as of
// then; the state and text filters apply to that head. $limit is the page size plus
// one, so the caller knows whether a next page exists.
MATCH (a:Atom)
WHERE a.subject = $subject AND a.atomId > coalesce($after, '')
CALL (a) {
  MATCH (r:Revision)
  WHERE r.subject = $subject AND r.atomId = a.atomId AND r.createdAt <= $asOf
  RETURN r ORDER BY r.rev DESC LIMIT 1
}
WITH a, r
WHERE ($state IS NULL OR r.state = $state)
  AND ($text IS NULL OR toLower(r.text) CONTAINS toLower($text))
WITH a, r
ORDER BY a.subject, a.atomId
LIMIT $limit
RETURN a.atomId AS atomId, a.createdAt AS createdAt,
       r {.atomId, .rev, .state, .text, .tokens, .digest, .createdAt, .actorKind, .actorId,
          .operationId, .atomisedInto, .archivedAt, atomOf: coalesce(r.atomOf, a.atomOf),
          head: true} AS head
