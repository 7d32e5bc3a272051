// The entities each atom's current head mentions (ENT-5: Atom.entities), by key.
UNWIND $atomIds AS aid
MATCH (:Atom {subject: $subject, atomId: aid})-[:HEAD]->(r:Current)-[m:MENTIONS]->(e:Entity)
WITH aid, e, m ORDER BY e.key
RETURN aid AS atomId,
       collect({key: e.key, name: e.name, type: e.type, aliases: e.aliases,
                mentions: e.mentions, count: m.count}) AS entities
