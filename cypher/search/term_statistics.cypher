// One subject's own BM25 statistics for a query (graphsvc.core.bm25): the number
// of its current bodies, their total length in space-separated words
// (graphsvc.core.bm25.body_length), and for each query
// term the number of its bodies that hold it. $terms are [term, lucene] pairs, the
// Lucene query naming one word and the subject (graphsvc.core.bm25.term_query),
// so each count is the subject's own, whatever other subjects hold.
// Cost: the length sum reads every current body of the subject, and each count
// every body of the subject holding the term (linear in the subject's size), so a
// subject of more than $statsMax bodies gets no row and keeps Lucene's index-wide
// statistics (which such a subject dominates anyway); counting up to that bound
// reads at most $statsMax + 1 nodes.
// No row while `graphsvc index rebuild --fulltext` runs (index/mark_fulltext_rebuild):
// the half-populated index is not called.
// The row carries the generation it was read at (the subject's change sequence and
// purge epoch, the fulltext index's generation), so the caller can keep the counts
// until one of them moves (graphsvc.store.term_statistics). A caller that keeps the
// body count and length of generation $keptAt (null: none) gets `current` true when
// that is still the generation: the linear part is skipped (docs and words null) and
// only the terms not in $known are counted; otherwise everything is read.
OPTIONAL MATCH (f:GraphsvcMeta {key: 'fulltextIndex'})
WITH f WHERE f IS NULL
OPTIONAL MATCH (cs:ChangeSequence {subject: $subject})
OPTIONAL MATCH (st:SubjectState {subject: $subject})
OPTIONAL MATCH (g:GraphsvcMeta {key: 'fulltextGeneration'})
WITH coalesce(cs.last, 0) AS changeSeq, coalesce(st.purgeEpoch, 0) AS purgeEpoch,
     coalesce(g.value, 0) AS fulltextGeneration
WITH changeSeq, purgeEpoch, fulltextGeneration,
     coalesce([changeSeq, purgeEpoch, fulltextGeneration] = $keptAt, false) AS current
OPTIONAL CALL (current) {
  WITH current WHERE NOT current
  CALL () {
    MATCH (n:Revision:Current {subject: $subject})
    WITH n LIMIT $statsMax + 1
    RETURN count(n) AS size
  }
  WITH size WHERE size <= $statsMax
  CALL () {
    MATCH (r:Revision:Current {subject: $subject})
    RETURN count(r) AS docs, sum(size(split(coalesce(r.text, ''), ' '))) AS words
  }
  RETURN docs, words
}
WITH changeSeq, purgeEpoch, fulltextGeneration, current, docs, words
WHERE current OR docs IS NOT NULL
CALL (current) {
  UNWIND $terms AS term
  WITH term WHERE NOT (current AND term[0] IN $known)
  CALL (term) {
    CALL db.index.fulltext.queryNodes('current_text', term[1]) YIELD node
    // The subject clause is a phrase: it also matches a subject that contains it.
    WITH node WHERE node.subject = $subject
    RETURN count(node) AS df
  }
  RETURN collect([term[0], df]) AS dfs
}
RETURN current, docs, words, dfs, changeSeq, purgeEpoch, fulltextGeneration
