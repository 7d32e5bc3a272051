// Signed derives_from edges touching any revision of the given atoms, both
// directions (parent -> atoms and atom -> parent).
UNWIND $atomIds AS aid
MATCH (a:Atom {subject: $subject, atomId: aid})-[:HAS_REVISION]->(r:Revision)
MATCH (r)-[d:DERIVES_FROM]-(o:Revision {subject: $subject})
WITH DISTINCT d
WITH d, startNode(d) AS c, endNode(d) AS p
RETURN c.atomId AS fromAtomId, c.rev AS fromRev, p.atomId AS toAtomId, p.rev AS toRev,
       d.signature AS signature, d.keyId AS keyId, d.signedAt AS signedAt
ORDER BY signedAt, fromAtomId
