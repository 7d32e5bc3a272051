// inspect's first page in one round trip (SPEC §7): the subject's state (a purge
// pending, LNK-6; the index generation a cursor binds, CUR-2), the inspected
// revision (default: the atom's head) with its facts, its collapsed one-hop
// neighbourhood (INS-3, INS-4), the entity keys the root's and the neighbours'
// current heads mention (ENT-5), and the views of the root and of the first
// $pageSize neighbours. Every part after the root is an aggregation, so the row
// survives when the root does not match (root: null, NOT_FOUND).
//
// The root: purged atoms and revisions (:Unavailable) and other subjects' data do
// not match. Its watches are those its provenance declared (stale; inherited
// inputs bring their watches along, TOK-5); its required links are one hop.
//
// The neighbourhood, ordered by (atomId, rev) so pages are stable:
//   outgoing: the root's links. With $version 'observed' an observed link binds to
//     its pinned revision and a logical link to the target atom's head; with
//     'logical' every target binds to its atom's head (INS-3).
//   incoming: links held by the *head* revision of another (or the same) atom —
//     observed links pinned to this revision, and logical links to this atom when
//     this revision is its head (a logical link binds to the head only).
// A link that is marked unavailable, or whose target is purged (:Unavailable),
// missing or of another subject, is returned only in `unavailable`, in the safe
// form of LNK-2: no target id, no body (and nothing about the source of an
// incoming one). Sources that are purged are not neighbours at all.
OPTIONAL MATCH (p:PurgeMarker {subject: $subject})
WITH count(p) > 0 AS pending
OPTIONAL MATCH (s:SubjectState {subject: $subject})
OPTIONAL MATCH (m:GraphsvcMeta {key: 'schema'})
WITH pending, coalesce(s.purgeEpoch, 0) AS purgeEpoch, m.version AS schemaVersion
OPTIONAL MATCH (a:Atom {subject: $subject, atomId: $atomId})-[:HAS_REVISION]->(r:Revision)
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
CALL (a, r) {
  CALL (a, r) {
    MATCH (r)-[l:LINK]->(t)
    WHERE $outgoing AND ($roles IS NULL OR l.role IN $roles)
    OPTIONAL MATCH (ta:Atom {subject: $subject, atomId: t.atomId})-[:HEAD]->(th:Revision)
    WITH l, t, ta, CASE WHEN l.at = 'observed' AND $version = 'observed' THEN t ELSE th END AS n
    RETURN 'outgoing' AS direction, l, n,
           coalesce(l.unavailable, false) OR t:Unavailable
             OR NOT coalesce(t.subject = $subject, false) OR ta IS NULL OR ta:Unavailable
             OR n IS NULL OR n:Unavailable AS unavailable
    UNION ALL
    MATCH (s:Revision)-[l:LINK]->(r)
    WHERE $incoming AND ($roles IS NULL OR l.role IN $roles) AND NOT s:Unavailable
    MATCH (sa:Atom {subject: $subject, atomId: s.atomId})-[:HEAD]->(s)
    WHERE NOT sa:Unavailable
    RETURN 'incoming' AS direction, l, s AS n, coalesce(l.unavailable, false) AS unavailable
    UNION ALL
    MATCH (s:Revision)-[l:LINK]->(a)
    WHERE $incoming AND a.headRev = r.rev AND ($roles IS NULL OR l.role IN $roles)
          AND NOT s:Unavailable
    MATCH (sa:Atom {subject: $subject, atomId: s.atomId})-[:HEAD]->(s)
    WHERE NOT sa:Unavailable
    RETURN 'incoming' AS direction, l, s AS n, coalesce(l.unavailable, false) AS unavailable
  }
  WITH unavailable,
       CASE WHEN unavailable THEN null ELSE n.atomId END AS nid,
       CASE WHEN unavailable THEN null ELSE n.rev END AS nrev,
       {direction: direction, role: l.role, at: l.at, required: coalesce(l.required, false),
        orderKey: l.orderKey, ordinal: l.ordinal} AS via
  WITH unavailable, nid, nrev, collect(via) AS vias
  ORDER BY nid, nrev
  WITH collect(CASE WHEN unavailable THEN null ELSE {atomId: nid, rev: nrev, via: vias} END)
         AS groups,
       collect(CASE WHEN unavailable THEN vias ELSE null END) AS gone
  RETURN size(groups) AS total, groups[0..$cap] AS neighbors,
         reduce(acc = [], vs IN gone | acc + vs) AS unavailable
}
CALL (r, neighbors) {
  UNWIND CASE WHEN r IS NULL THEN [] ELSE [r.atomId] + [n IN neighbors | n.atomId] END AS aid
  WITH DISTINCT aid
  MATCH (:Atom {subject: $subject, atomId: aid})-[:HEAD]->(:Current)-[:MENTIONS]->(e:Entity)
  WITH aid, e.key AS key ORDER BY key
  WITH aid, collect(key) AS keys
  RETURN collect({atomId: aid, keys: keys}) AS entityKeys
}
CALL (r, neighbors) {
  UNWIND CASE WHEN r IS NULL THEN []
              ELSE [{atomId: r.atomId, rev: r.rev}]
                   + [n IN neighbors[0..$pageSize] | {atomId: n.atomId, rev: n.rev}] END AS x
  MATCH (va:Atom {subject: $subject, atomId: x.atomId})-[:HAS_REVISION]->
        (vr:Revision {rev: x.rev})
  CALL (vr) {
    OPTIONAL MATCH (vr)-[l:LINK]->(t)
    WITH l, t ORDER BY l.ordinal
    RETURN collect(CASE WHEN l IS NULL THEN null ELSE {
      role: l.role, at: l.at, required: l.required, orderKey: l.orderKey,
      unavailable: coalesce(l.unavailable, false) OR t:Unavailable,
      atomId: t.atomId,
      rev: CASE WHEN t:Atom THEN t.headRev ELSE t.rev END
    } END) AS links
  }
  RETURN collect({
    atomId: vr.atomId, rev: vr.rev, state: vr.state, text: vr.text, sources: vr.sources,
    atomOf: coalesce(vr.atomOf, va.atomOf), atomisedInto: vr.atomisedInto,
    archivedAt: vr.archivedAt, head: va.headRev = vr.rev, links: links
  }) AS views
}
RETURN pending, purgeEpoch, schemaVersion,
       CASE WHEN r IS NULL THEN null ELSE {
         atomId: r.atomId, rev: r.rev, state: r.state, digest: r.digest,
         headRev: a.headRev, headState: h.state, atomisedInto: r.atomisedInto,
         archivedAt: r.archivedAt, usage: u.state, watches: watches,
         requiredLinks: requiredLinks, requiredBlocked: requiredBlocked
       } END AS root,
       total, neighbors, unavailable, entityKeys, views
