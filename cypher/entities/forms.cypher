// Every form (the key a mention's own text gave) of one subject, the entity its
// mentions now belong to, and the types they give: the input of ENT-6's resolution.
// A mention written before resolution existed has no form: its entity's key is it.
// Tentative mentions (a sentence's opening word) are not forms: they join one.
MATCH (e:Entity {subject: $subject})<-[m:MENTIONS]-(:Revision)
WHERE m.tentative IS NULL
RETURN coalesce(m.form, e.key) AS form, e.key AS key, collect(DISTINCT m.type) AS types
