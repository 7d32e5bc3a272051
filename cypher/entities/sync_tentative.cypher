// ENT-6: the tentative mention edges that no longer count go ($drops: atomId, form,
// key), those that now count come ($adds: a head, its tentative mention's row and
// the key of the entity it joins, created when new).
CALL () {
  UNWIND $drops AS d
  MATCH (:Revision:Current {subject: $subject, atomId: d.atomId})-[m:MENTIONS]->
        (:Entity {subject: $subject, key: d.key})
  WHERE m.tentative AND m.form = d.form
  DELETE m
  RETURN count(*) AS dropped
}
CALL () {
  UNWIND $adds AS x
  MATCH (r:Revision:Current {subject: $subject, atomId: x.atomId, rev: x.rev})
  MERGE (e:Entity {subject: $subject, key: x.target})
  ON CREATE SET e.name = x.name, e.type = x.type, e.aliases = x.aliases, e.mentions = 0
  CREATE (r)-[:MENTIONS {name: x.name, type: x.type, count: x.count, aliases: x.aliases,
                         form: x.key, tentative: true}]->(e)
  RETURN count(*) AS added
}
RETURN dropped, added
