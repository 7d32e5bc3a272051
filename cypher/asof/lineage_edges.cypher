// Signed derives_from edges touching any revision of the given atoms, both
// directions, as of $asOf: an edge exists from its child revision's creation on
// (the child and its edge are written in one transaction).
UNWIND $atomIds AS aid
MATCH (a:Atom {subject: $subject, atomId: aid})-[:HAS_REVISION]->(r:Revision)
MATCH (r)-[d:DERIVES_FROM]-(o:Revision {subject: $subject})
WITH DISTINCT d
WITH d, startNode(d) AS c, endNode(d) AS p
WHERE c.createdAt <= $asOf
RETURN c.atomId AS fromAtomId, c.rev AS fromRev, p.atomId AS toAtomId, p.rev AS toRev,
       d.signature AS signature, d.keyId AS keyId, d.signedAt AS signedAt
ORDER BY signedAt, fromAtomId
