// Read replay (docs/time-travel.md): one manifest of the subject with every revision
// it presented — its text and tokens as presented (revisions are immutable), its
// citations and the watches its provenance declared — and, per presented atom, its
// head now. A manifest that presented a purged revision was erased with it (purge is
// erasure), so it does not match; nor does another subject's.
MATCH (m:Manifest {subject: $subject, manifestId: $manifestId})
OPTIONAL MATCH (m)-[:PRESENTS]->(r:Revision)
OPTIONAL MATCH (a:Atom {subject: $subject, atomId: r.atomId})-[:HEAD]->(h:Revision)
CALL (r) {
  OPTIONAL MATCH (r)-[c:CITES]->(s:Source {subject: $subject})
  WITH c, s ORDER BY c.ordinal
  RETURN collect(CASE WHEN c IS NULL THEN null ELSE {
    uri: s.uri, version: s.version, digest: s.digest, start: c.start, end: c.end,
    unit: c.unit, verified: coalesce(c.verified, false)
  } END) AS citations
}
CALL (r) {
  OPTIONAL MATCH (r)-[:GENERATED_FROM]->(:Input {subject: $subject})
                 -[:INHERITS*0..32]->(:Input {subject: $subject})-[:WATCHES]->(w:Revision)
  WITH DISTINCT w
  WHERE w IS NOT NULL
  OPTIONAL MATCH (wa:Atom {subject: $subject, atomId: w.atomId})
  WITH w, wa ORDER BY w.atomId, w.rev
  RETURN collect({atomId: w.atomId, rev: w.rev, headRev: wa.headRev}) AS watches
}
WITH m, r, h, citations, watches ORDER BY r.atomId, r.rev
RETURN m.manifestId AS manifestId, m.createdAt AS createdAt, m.policy AS policy,
       m.actorKind AS actorKind, m.actorId AS actorId, m.digest AS digest,
       m.acknowledgedEventId AS acknowledgedEventId,
       collect(CASE WHEN r IS NULL THEN null ELSE {
         atomId: r.atomId, rev: r.rev, state: r.state, text: r.text, tokens: r.tokens,
         headRev: h.rev, headState: h.state, citations: citations, watches: watches
       } END) AS presented
