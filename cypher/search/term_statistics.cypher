// One subject's own BM25 statistics for a query (graphsvc.core.bm25): the number
// of its current bodies, their total length in space-separated words
// (graphsvc.core.bm25.body_length), and for each query
// term the number of its bodies that hold it. $terms are [term, lucene] pairs, the
// Lucene query naming one word and the subject (graphsvc.core.lucene.term_query),
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
// until one of them moves (graphsvc.store.term_statistics).
OPTIONAL MATCH (f:GraphsvcMeta {key: 'fulltextIndex'})
WITH f WHERE f IS NULL
OPTIONAL MATCH (cs:ChangeSequence {subject: $subject})
OPTIONAL MATCH (st:SubjectState {subject: $subject})
OPTIONAL MATCH (g:GraphsvcMeta {key: 'fulltextGeneration'})
WITH coalesce(cs.last, 0) AS changeSeq, coalesce(st.purgeEpoch, 0) AS purgeEpoch,
     coalesce(g.value, 0) AS fulltextGeneration
CALL () {
  MATCH (n:Revision:Current {subject: $subject})
  WITH n LIMIT $statsMax + 1
  RETURN count(n) AS size
}
WITH changeSeq, purgeEpoch, fulltextGeneration, size WHERE size <= $statsMax
CALL () {
  MATCH (r:Revision:Current {subject: $subject})
  RETURN count(r) AS docs, sum(size(split(coalesce(r.text, ''), ' '))) AS words
}
CALL () {
  UNWIND $terms AS term
  CALL (term) {
    CALL db.index.fulltext.queryNodes('current_text', term[1]) YIELD node
    // The subject clause is a phrase: it also matches a subject that contains it.
    WITH node WHERE node.subject = $subject
    RETURN count(node) AS df
  }
  RETURN collect([term[0], df]) AS dfs
}
RETURN docs, words, dfs, changeSeq, purgeEpoch, fulltextGeneration
