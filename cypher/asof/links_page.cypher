// One page of each given revision's outgoing links as of $asOf (the shape of
// graph/links_page). A revision's links never change, so only the targets move with
// time: an observed link names its pinned revision (created before its holder, so it
// existed by then), a logical one its atom, bound to the target's head as of $asOf.
// A purged target (:Unavailable), an unavailable link, a target of another subject or
// a logical target with no revision by $asOf has the safe form of LNK-2. The holder
// must itself exist by $asOf. $cap bounds what one key collects.
UNWIND $keys AS k
MATCH (:Atom {subject: $subject, atomId: k.atomId})-[:HAS_REVISION]->
      (r:Revision {rev: k.rev})
WHERE r.createdAt <= $asOf
CALL (r, k) {
  MATCH (r)-[l:LINK]->(t)
  WHERE (k.role IS NULL OR l.role = k.role) AND (k.after IS NULL OR l.ordinal > k.after)
  WITH k, l, t,
       coalesce(l.unavailable, false) OR t:Unavailable
         OR NOT coalesce(t.subject = $subject, false) AS unavailable
  OPTIONAL MATCH (ta:Atom {subject: $subject, atomId: t.atomId})
  CALL (ta) {
    OPTIONAL MATCH (h:Revision)
    WHERE h.subject = $subject AND h.atomId = ta.atomId AND h.createdAt <= $asOf
    WITH h ORDER BY h.rev DESC LIMIT 1
    RETURN h AS th
  }
  WITH k, l, t, unavailable OR ta IS NULL OR th IS NULL AS unavailable, ta, th
  ORDER BY l.ordinal
  LIMIT $cap
  WITH k, collect({
    role: l.role, at: l.at, required: coalesce(l.required, false), orderKey: l.orderKey,
    ordinal: l.ordinal, unavailable: unavailable,
    atomId: CASE WHEN unavailable THEN null ELSE t.atomId END,
    rev: CASE WHEN unavailable OR t:Atom THEN null ELSE t.rev END,
    targetRevision: CASE WHEN unavailable OR t:Atom THEN null ELSE
      t {.atomId, .rev, .state, .text, .tokens, .digest, .createdAt, .actorKind, .actorId,
         .operationId, .atomisedInto, .archivedAt, atomOf: coalesce(t.atomOf, ta.atomOf),
         head: th.rev = t.rev} END,
    targetAtom: CASE WHEN unavailable OR NOT t:Atom THEN null ELSE
      {atomId: ta.atomId, createdAt: ta.createdAt,
       head: th {.atomId, .rev, .state, .text, .tokens, .digest, .createdAt, .actorKind,
                 .actorId, .operationId, .atomisedInto, .archivedAt,
                 atomOf: coalesce(th.atomOf, ta.atomOf), head: true}} END,
    targetCitations: null
  }) AS found
  RETURN found[0..k.limit] AS links
}
RETURN k.key AS key, links
