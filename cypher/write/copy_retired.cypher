// WR-4 / LNK-4: a retired revision keeps the body, links (including unavailable
// ones), sources and provenance of the revision it retires, unchanged.
UNWIND $retires AS x
MATCH (old:Revision {subject: $subject, atomId: x.atomId, rev: x.fromRev})
MATCH (new:Revision {subject: $subject, atomId: x.atomId, rev: x.toRev})
SET new.text = old.text, new.digest = old.digest, new.tokens = old.tokens,
    new.sources = old.sources, new.atomOf = old.atomOf,
    new.atomisedInto = old.atomisedInto, new.archivedAt = old.archivedAt
WITH old, new
CALL (old, new) {
  MATCH (old)-[l:LINK]->(t)
  CREATE (new)-[l2:LINK]->(t)
  SET l2 = properties(l)
  RETURN count(l2) AS links
}
CALL (old, new) {
  MATCH (old)-[c:CITES]->(s)
  CREATE (new)-[c2:CITES]->(s)
  SET c2 = properties(c)
  RETURN count(c2) AS cites
}
CALL (old, new) {
  MATCH (old)-[g:GENERATED_FROM]->(i)
  CREATE (new)-[:GENERATED_FROM]->(i)
  RETURN count(*) AS gens
}
RETURN count(new) AS retired
