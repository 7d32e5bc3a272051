// inspect/first_page's root as of $asOf (docs/time-travel.md): the inspected revision (default:
// the head as of $asOf, the newest revision created at or before it) must exist by
// then; `headRev`/`headState` are the head as of then, and the required-link check
// binds logical targets to their heads as of then. Watches and the usage state are
// the stored ones (they describe now, not then). Purged atoms never match.
MATCH (a:Atom {subject: $subject, atomId: $atomId})
CALL (a) {
  MATCH (h:Revision)
  WHERE h.subject = $subject AND h.atomId = a.atomId AND h.createdAt <= $asOf
  RETURN h ORDER BY h.rev DESC LIMIT 1
}
MATCH (a)-[:HAS_REVISION]->(r:Revision)
WHERE r.rev = coalesce($rev, h.rev) AND r.createdAt <= $asOf
      AND NOT a:Unavailable AND NOT r:Unavailable
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
  CALL (t) {
    OPTIONAL MATCH (th:Revision)
    WHERE t:Atom AND th.subject = $subject AND th.atomId = t.atomId
          AND th.createdAt <= $asOf
    WITH th ORDER BY th.rev DESC LIMIT 1
    RETURN th
  }
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
       h.rev AS headRev, h.state AS headState, r.atomisedInto AS atomisedInto,
       r.archivedAt AS archivedAt, u.state AS usage, watches, requiredLinks,
       requiredBlocked
