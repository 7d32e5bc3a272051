// What each entity's current mentions say (name, type, count, aliases), to derive
// its display name, type and aliases from surviving text only (ENT-3), and each
// mention's own form (ENT-6: the full form names a joined entity).
UNWIND $keys AS k
MATCH (e:Entity {subject: $subject, key: k})
OPTIONAL MATCH (:Revision)-[m:MENTIONS]->(e)
RETURN k AS key,
       collect([m.name, m.type, m.count, m.aliases, coalesce(m.form, k)]) AS mentions
