// Signed derives_from edges out of any revision of the given atoms (child -> parent),
// so each edge is reported once, by its child's page.
UNWIND $atomIds AS aid
MATCH (c:Revision {subject: $subject, atomId: aid})-[d:DERIVES_FROM]->
      (p:Revision {subject: $subject})
RETURN c.atomId AS fromAtomId, c.rev AS fromRev, p.atomId AS toAtomId, p.rev AS toRev,
       d.signature AS signature, d.keyId AS keyId, d.signedAt AS signedAt
ORDER BY fromAtomId, fromRev, toAtomId, toRev
