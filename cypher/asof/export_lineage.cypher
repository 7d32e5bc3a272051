// Signed derives_from edges out of the given atoms' revisions created at or before
// $asOf (child -> parent; an edge is written with its child), for the as-of export.
UNWIND $atomIds AS aid
MATCH (c:Revision {subject: $subject, atomId: aid})-[d:DERIVES_FROM]->
      (p:Revision {subject: $subject})
WHERE c.createdAt <= $asOf
RETURN c.atomId AS fromAtomId, c.rev AS fromRev, p.atomId AS toAtomId, p.rev AS toRev,
       d.signature AS signature, d.keyId AS keyId, d.signedAt AS signedAt
ORDER BY fromAtomId, fromRev, toAtomId, toRev
