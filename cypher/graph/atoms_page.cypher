// One page of the subject's atoms in atomId order (keyset: ids after $after), with
// optional filters on the head's state and a case-insensitive substring of its text.
// $limit is the page size plus one, so the caller knows whether a next page exists.
MATCH (a:Atom {subject: $subject})-[:HEAD]->(r:Revision)
WHERE ($after IS NULL OR a.atomId > $after)
  AND ($state IS NULL OR r.state = $state)
  AND ($text IS NULL OR toLower(r.text) CONTAINS toLower($text))
WITH a, r
ORDER BY a.atomId
LIMIT $limit
RETURN a.atomId AS atomId, a.createdAt AS createdAt,
       r {.atomId, .rev, .state, .text, .tokens, .digest, .createdAt, .actorKind, .actorId,
          .operationId, .atomisedInto, .archivedAt, atomOf: coalesce(r.atomOf, a.atomOf),
          head: true} AS head
