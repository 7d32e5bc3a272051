// ENT-6: the mentions of one form move from the entity they belong to to the entity
// resolution says (created when new); the keys of both come back, to be refreshed.
UNWIND $moves AS mv
MATCH (:Entity {subject: $subject, key: mv.source})<-[m:MENTIONS]-(r:Revision)
WHERE coalesce(m.form, mv.source) = mv.form
MERGE (t:Entity {subject: $subject, key: mv.target})
  ON CREATE SET t.name = m.name, t.type = m.type, t.aliases = m.aliases, t.mentions = 0
CREATE (r)-[n:MENTIONS]->(t)
SET n = properties(m), n.form = mv.form
DELETE m
RETURN collect(DISTINCT mv.source) + collect(DISTINCT mv.target) AS keys
