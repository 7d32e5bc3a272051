// The document frequencies of query terms a process does not know yet, for a
// subject whose size and total length it already holds at some generation
// (graphsvc.store.term_statistics): the counts of search/term_statistics without
// its linear part (the count and length of every body). $terms are [term, lucene]
// pairs as there. The row carries the generation it was read at; the caller uses
// the counts only if it is the one its totals are of, and reads search/
// term_statistics otherwise. No row while `graphsvc index rebuild --fulltext` runs.
OPTIONAL MATCH (f:GraphsvcMeta {key: 'fulltextIndex'})
WITH f WHERE f IS NULL
OPTIONAL MATCH (cs:ChangeSequence {subject: $subject})
OPTIONAL MATCH (st:SubjectState {subject: $subject})
OPTIONAL MATCH (g:GraphsvcMeta {key: 'fulltextGeneration'})
WITH coalesce(cs.last, 0) AS changeSeq, coalesce(st.purgeEpoch, 0) AS purgeEpoch,
     coalesce(g.value, 0) AS fulltextGeneration
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
RETURN dfs, changeSeq, purgeEpoch, fulltextGeneration
