// The inspected revision (default: the atom's head) with what inspect reports
// about it: head and state (read eligibility), the root's own required links
// (one hop), the watches its provenance declared (stale; inherited inputs bring
// their watches along, TOK-5) and the caller's usage state. Purged atoms and
// revisions (:Unavailable) and other subjects' data do not match: NOT_FOUND.
MATCH (a:Atom {subject: $subject, atomId: $atomId})-[:HAS_REVISION]->(r:Revision)
WHERE r.rev = coalesce($rev, a.headRev) AND NOT a:Unavailable AND NOT r:Unavailable
OPTIONAL MATCH (a)-[:HEAD]->(h:Revision)
OPTIONAL MATCH (u:UsageState {subject: $subject, policy: $policy, atomId: r.atomId,
                              rev: r.rev, modelId: $modelId})
CALL (r) {
  OPTIONAL MATCH (r)-[:GENERATED_FROM]->(:Input {subject: $subject})
                 -[:INHERITS*0..32]->(:Input {subject: $subject})-[:WATCHES]->(w:Revision)
  WITH DISTINCT w
  WHERE w IS NOT NULL
  OPTIONAL MATCH (wa:Atom {subject: $subject, atomId: w.atomId})
  WITH w, wa ORDER BY w.atomId, w.rev
  RETURN collect({
    atomId: w.atomId, rev: w.rev, headRev: wa.headRev,
    moved: wa IS NULL OR wa:Unavailable OR w:Unavailable OR wa.headRev > w.rev
  }) AS watches
}
CALL (r) {
  OPTIONAL MATCH (r)-[l:LINK]->(t)
  WHERE l.required
  OPTIONAL MATCH (t:Atom)-[:HEAD]->(th:Revision)
  WITH l, t, th
  WHERE l IS NOT NULL
  RETURN count(l) AS requiredLinks,
         count(CASE WHEN coalesce(l.unavailable, false) OR t:Unavailable
                         OR NOT coalesce(t.subject = $subject, false)
                         OR (l.at = 'logical'
                             AND (th IS NULL OR th:Unavailable OR th.state = 'retired'))
                    THEN 1 END) AS requiredBlocked
}
RETURN r.atomId AS atomId, r.rev AS rev, r.state AS state, r.digest AS digest,
       a.headRev AS headRev, h.state AS headState, r.atomisedInto AS atomisedInto,
       r.archivedAt AS archivedAt, u.state AS usage, watches, requiredLinks,
       requiredBlocked
