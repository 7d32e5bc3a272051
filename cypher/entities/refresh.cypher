// Entities keep what their mentions say; an entity without mentions is deleted (ENT-2).
CALL () {
  UNWIND $rows AS x
  MATCH (e:Entity {subject: $subject, key: x.key})
  SET e.name = x.name, e.type = x.type, e.aliases = x.aliases, e.mentions = x.mentions
  RETURN count(e) AS kept
}
CALL () {
  UNWIND $orphans AS k
  MATCH (e:Entity {subject: $subject, key: k})
  WHERE NOT ()-[:MENTIONS]->(e)
  DETACH DELETE e
  RETURN count(*) AS deleted
}
RETURN kept, deleted
