// The entity index's part of the retrieval graph (ENT-4): the entities the seeds'
// current heads mention, and the entities named by the query's keys ($queryKeys),
// each with every current head that mentions it, for entities mentioned by at
// most $maxDegree heads (a more common one is not traversed). `seeds` gives, per
// seed (in the caller's order), the keys it reaches and whether its head is indexed.
// DISTINCT: a head naming two forms of one entity holds a mention edge per form (ENT-6).
CALL () {
  UNWIND range(0, size($atomIds) - 1) AS i
  MATCH (:Atom {subject: $subject, atomId: $atomIds[i]})-[:HEAD]->(r:Current)
  OPTIONAL MATCH (r)-[:MENTIONS]->(e:Entity)
  WHERE e.mentions <= $maxDegree
  WITH i, r, collect(DISTINCT e.key) AS keys
  ORDER BY i
  RETURN collect([r.atomId, r.entityIndex IS NOT NULL, keys]) AS seeds
}
WITH seeds, reduce(acc = [], s IN seeds | acc + s[2]) AS reached
CALL (reached) {
  UNWIND $queryKeys + reached AS k
  WITH DISTINCT k
  MATCH (e:Entity {subject: $subject, key: k})
  WHERE e.mentions <= $maxDegree
  MATCH (e)<-[:MENTIONS]-(h:Revision:Current)
  WITH e, collect(DISTINCT [h.atomId, h.rev, h.atomisedInto, h.archivedAt]) AS heads
  RETURN collect([e.key, e.key IN $queryKeys, heads]) AS entities
}
RETURN seeds, entities
