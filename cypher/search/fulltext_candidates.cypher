// Lexical candidates: the index's top $k for the query, then the caller's subject.
// The Lucene query may omit the subject clause (cheaper: the clause is a phrase
// query over every atom of the subject); `seen` tells the caller whether the
// top $k was full, so it can retry with the clause when too few were its own.
// Hits come in the index's order (score, highest first) as [atomId, rev, score,
// atomisedInto, archivedAt, embedding, text] (the text, of every hit, lets the caller
// score it with the subject's own statistics, graphsvc.core.bm25). Every hit that can be among the caller's
// top $limit carries its embedding (null only for a head without one): the first
// $limit, and every hit that ties the $limit-th score (BM25 scores tie often and
// the caller breaks ties by atomId). The caller computes their semantic signal
// once the query embedding is ready, without another query.
// The subject's state rides along (the same columns as search/subject_state:
// whether a purge is unfinished, the index generation), so an evaluation's purge
// check costs no round trip of its own; so does the fulltext index's generation
// (index/clear_fulltext_rebuild moves it), which says whether the analyzer a
// process read earlier is still the index's, and the subject's change sequence,
// which with the other two says whether its term statistics a process read earlier
// are still current (graphsvc.store.term_statistics).
// While `graphsvc index rebuild --fulltext` runs (index/mark_fulltext_rebuild) the
// index is not called and no hits come back (`rebuilding`): the caller then has no
// lexical signal, instead of reading a half-populated index.
OPTIONAL MATCH (p:PurgeMarker {subject: $subject})
WITH count(p) > 0 AS pending
OPTIONAL MATCH (s:SubjectState {subject: $subject})
OPTIONAL MATCH (m:GraphsvcMeta {key: 'schema'})
OPTIONAL MATCH (f:GraphsvcMeta {key: 'fulltextIndex'})
OPTIONAL MATCH (g:GraphsvcMeta {key: 'fulltextGeneration'})
OPTIONAL MATCH (cs:ChangeSequence {subject: $subject})
WITH pending, coalesce(s.purgeEpoch, 0) AS purgeEpoch, m.version AS schemaVersion,
     f IS NOT NULL AS rebuilding, coalesce(g.value, 0) AS fulltextGeneration,
     coalesce(cs.last, 0) AS changeSeq
CALL (rebuilding) {
  WITH rebuilding WHERE NOT rebuilding
  CALL db.index.fulltext.queryNodes('current_text', $lucene, {limit: $k})
  YIELD node, score
  WITH node, score,
       node.subject = $subject AND score > 0
       AND ($includeArchived
            OR NOT (coalesce(node.atomisedInto, 0) > 0 AND node.archivedAt IS NOT NULL)) AS own
  RETURN count(*) AS seen,
         collect(CASE WHEN own THEN node END) AS nodes,
         collect(CASE WHEN own THEN score END) AS scores
}
WITH pending, purgeEpoch, schemaVersion, rebuilding, fulltextGeneration, changeSeq, seen,
     nodes, scores,
     CASE WHEN size(scores) > $limit THEN scores[$limit - 1] END AS edge
WITH pending, purgeEpoch, schemaVersion, rebuilding, fulltextGeneration, changeSeq, seen,
     nodes, scores,
     [i IN range(0, size(scores) - 1) | i < $limit OR (edge IS NOT NULL AND scores[i] = edge)] AS fetch
RETURN pending, purgeEpoch, schemaVersion, rebuilding, fulltextGeneration, changeSeq, seen,
       [i IN range(0, size(nodes) - 1) |
        [nodes[i].atomId, nodes[i].rev, scores[i], nodes[i].atomisedInto,
         nodes[i].archivedAt, CASE WHEN fetch[i] THEN nodes[i].embedding END,
         nodes[i].text]] AS hits
