// One page of the subject's atoms in atomId order (keyset: ids after $after), with
// optional filters on the head's state and a case-insensitive substring of its text.
// $limit is the page size plus one, so the caller knows whether a next page exists.
// The range on atomId (with subject equal) seeks the (subject, atomId) index in
// atomId order, so a page reads about $limit atoms, not the whole subject.
MATCH (a:Atom)
WHERE a.subject = $subject AND a.atomId > coalesce($after, '')
MATCH (a)-[:HEAD]->(r:Revision)
WHERE ($state IS NULL OR r.state = $state)
  AND ($text IS NULL OR toLower(r.text) CONTAINS toLower($text))
WITH a, r
ORDER BY a.subject, a.atomId
LIMIT $limit
RETURN a.atomId AS atomId, a.createdAt AS createdAt,
       r {.atomId, .rev, .state, .text, .tokens, .digest, .createdAt, .actorKind, .actorId,
          .operationId, .atomisedInto, .archivedAt, atomOf: coalesce(r.atomOf, a.atomOf),
          head: true} AS head
