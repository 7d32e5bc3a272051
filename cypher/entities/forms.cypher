// Every form (the key a mention's own text gave) of one subject, the entity its
// mentions now belong to, and the types they give: the input of ENT-6's resolution.
// A mention written before resolution existed has no form: its entity's key is it.
MATCH (e:Entity {subject: $subject})<-[m:MENTIONS]-(:Revision)
RETURN coalesce(m.form, e.key) AS form, e.key AS key, collect(DISTINCT m.type) AS types
