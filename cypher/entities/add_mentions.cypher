// The mentions of new current heads (ENT-1): MENTIONS from the head to the entity of
// each key (created when new), with the surface forms and type of this text. The
// head is marked as indexed by the extractor's version (a rebuild indexes the heads
// not marked with its version; diagnostics count unmarked heads). `form` is the key
// the text itself gave (ENT-6's resolution may move the mention to another entity).
// `tentative` (JSON, or null) keeps the head's tentative mentions: ENT-6's
// resolution adds their edges while the subject's other texts make them names.
UNWIND $heads AS h
MATCH (r:Revision:Current {subject: $subject, atomId: h.atomId, rev: h.rev})
SET r.entityIndex = $extractor, r.tentative = h.tentative
WITH r, h
UNWIND h.mentions AS x
MERGE (e:Entity {subject: $subject, key: x.key})
ON CREATE SET e.name = x.name, e.type = x.type, e.aliases = x.aliases, e.mentions = 0
CREATE (r)-[:MENTIONS {name: x.name, type: x.type, count: x.count, aliases: x.aliases, form: x.key}]->(e)
RETURN collect(DISTINCT x.key) AS keys
