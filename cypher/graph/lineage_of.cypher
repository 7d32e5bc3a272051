// The signed derives_from edges at each given revision: derivesFrom (this revision
// -> the parent revision it was cut from) and derivedInto (child revisions -> this
// one). Both ends are of the subject; purged ends are gone with their edges.
UNWIND $refs AS x
MATCH (:Atom {subject: $subject, atomId: x.atomId})-[:HAS_REVISION]->
      (r:Revision {rev: x.rev})
CALL (r) {
  OPTIONAL MATCH (r)-[d:DERIVES_FROM]->(p:Revision {subject: $subject})
  WITH d, p ORDER BY p.atomId, p.rev
  RETURN collect(CASE WHEN d IS NULL THEN null ELSE {
    fromAtomId: r.atomId, fromRev: r.rev, toAtomId: p.atomId, toRev: p.rev,
    signature: d.signature, keyId: d.keyId, signedAt: d.signedAt
  } END) AS derivesFrom
}
CALL (r) {
  OPTIONAL MATCH (c:Revision {subject: $subject})-[d:DERIVES_FROM]->(r)
  WITH d, c ORDER BY d.signedAt, c.atomId, c.rev
  RETURN collect(CASE WHEN d IS NULL THEN null ELSE {
    fromAtomId: c.atomId, fromRev: c.rev, toAtomId: r.atomId, toRev: r.rev,
    signature: d.signature, keyId: d.keyId, signedAt: d.signedAt
  } END) AS derivedInto
}
RETURN x.atomId AS atomId, x.rev AS rev, derivesFrom, derivedInto
