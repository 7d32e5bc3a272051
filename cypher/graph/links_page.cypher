// One page of each given revision's outgoing links in stored order (keyset: ordinals
// after k.after), optionally of one role. A link whose target is purged (the
// :Unavailable node), marked unavailable, or not of the subject comes back in the
// safe form of LNK-2: no target id, no target row. An observed link names its pinned
// revision, a logical one its atom (the reader binds it to the head); each comes with
// the target's row (targetRevision, or targetAtom with its head) so the reader needs
// no second round trip for the targets. With k.withCitations (the query asks for the
// targets' citations) each available target also brings its revision's citations
// (targetCitations, in the shape of graph/citations), so they need no round trip
// either; without it targetCitations is null and no CITES edge is read. $cap, the
// largest k.limit of the batch, bounds what one key collects.
UNWIND $keys AS k
MATCH (:Atom {subject: $subject, atomId: k.atomId})-[:HAS_REVISION]->
      (r:Revision {rev: k.rev})
CALL (r, k) {
  MATCH (r)-[l:LINK]->(t)
  WHERE (k.role IS NULL OR l.role = k.role) AND (k.after IS NULL OR l.ordinal > k.after)
  WITH k, l, t,
       coalesce(l.unavailable, false) OR t:Unavailable
         OR NOT coalesce(t.subject = $subject, false) AS unavailable
  OPTIONAL MATCH (ta:Atom {subject: $subject, atomId: t.atomId})-[:HEAD]->(th:Revision)
  WITH k, l, t, unavailable OR ta IS NULL AS unavailable, ta, th
  ORDER BY l.ordinal
  LIMIT $cap
  CALL (k, t, th, unavailable) {
    WITH k, unavailable, CASE WHEN t:Atom THEN th ELSE t END AS tr
    WHERE coalesce(k.withCitations, false) AND NOT unavailable
    OPTIONAL MATCH (tr)-[c:CITES]->(s:Source {subject: $subject})
    WITH c, s ORDER BY c.ordinal
    RETURN collect(CASE WHEN c IS NULL THEN null ELSE {
      ordinal: c.ordinal, start: c.start, end: c.end, unit: c.unit,
      verified: coalesce(c.verified, false), sourceKey: s.sourceKey, uri: s.uri,
      version: s.version, digest: s.digest
    } END) AS cites
  }
  WITH k, l, t, unavailable, ta, th,
       CASE WHEN coalesce(k.withCitations, false) AND NOT unavailable THEN cites END
         AS cites
  WITH k, collect({
    role: l.role, at: l.at, required: coalesce(l.required, false), orderKey: l.orderKey,
    ordinal: l.ordinal, unavailable: unavailable,
    atomId: CASE WHEN unavailable THEN null ELSE t.atomId END,
    rev: CASE WHEN unavailable OR t:Atom THEN null ELSE t.rev END,
    targetRevision: CASE WHEN unavailable OR t:Atom THEN null ELSE
      t {.atomId, .rev, .state, .text, .tokens, .digest, .createdAt, .actorKind, .actorId,
         .operationId, .atomisedInto, .archivedAt, atomOf: coalesce(t.atomOf, ta.atomOf),
         head: ta.headRev = t.rev} END,
    targetAtom: CASE WHEN unavailable OR NOT t:Atom THEN null ELSE
      {atomId: ta.atomId, createdAt: ta.createdAt,
       head: th {.atomId, .rev, .state, .text, .tokens, .digest, .createdAt, .actorKind,
                 .actorId, .operationId, .atomisedInto, .archivedAt,
                 atomOf: coalesce(th.atomOf, ta.atomOf), head: true}} END,
    targetCitations: cites
  }) AS found
  RETURN found[0..k.limit] AS links
}
RETURN k.key AS key, links
