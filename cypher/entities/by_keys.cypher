// Entities of a subject by key (the typed graph's node lookup).
UNWIND $keys AS k
MATCH (e:Entity {subject: $subject, key: k})
RETURN e.key AS key, e.name AS name, e.type AS type, e.aliases AS aliases,
       e.mentions AS mentions
