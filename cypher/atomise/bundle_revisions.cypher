// Every revision of the given atoms, with its links in stored order (forensic bundle).
UNWIND $atomIds AS aid
MATCH (a:Atom {subject: $subject, atomId: aid})-[:HAS_REVISION]->(r:Revision)
CALL (r) {
  OPTIONAL MATCH (r)-[l:LINK]->(t)
  WITH l, t ORDER BY l.ordinal
  RETURN collect(CASE WHEN l IS NULL THEN null ELSE {
    role: l.role, at: l.at, required: l.required, orderKey: l.orderKey,
    unavailable: coalesce(l.unavailable, false) OR t:Unavailable,
    atomId: t.atomId, rev: CASE WHEN t:Atom THEN l.boundRev ELSE t.rev END
  } END) AS links
}
RETURN r.atomId AS atomId, r.rev AS rev, r.state AS state, r.text AS text,
       r.digest AS digest, r.tokens AS tokens, r.sources AS sources,
       r.createdAt AS createdAt, r.actorKind AS actorKind, r.actorId AS actorId,
       r.policy AS policy, r.operationId AS operationId,
       coalesce(r.atomOf, a.atomOf) AS atomOf, r.atomisedInto AS atomisedInto,
       r.archivedAt AS archivedAt, r.atomIds AS atomIds, links
ORDER BY atomId, rev
