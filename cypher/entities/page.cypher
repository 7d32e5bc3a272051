// One page of a subject's entities (ENT-5: entities(query, type, first, after)):
// keys containing the normalised $query (or an alias containing it, any case),
// of $type (null: any), after the key $after, by key; $limit = first + 1.
MATCH (e:Entity {subject: $subject})
WHERE ($type IS NULL OR e.type = $type)
  AND ($after IS NULL OR e.key > $after)
  AND ($query IS NULL OR e.key CONTAINS $query
       OR any(a IN e.aliases WHERE toLower(a) CONTAINS $query))
WITH e ORDER BY e.key
LIMIT $limit
RETURN e.key AS key, e.name AS name, e.type AS type, e.aliases AS aliases,
       e.mentions AS mentions
