// Lexical candidates: the index's top $k for the query, then the caller's subject.
// The Lucene query may omit the subject clause (cheaper: the clause is a phrase
// query over every atom of the subject); `seen` tells the caller whether the
// top $k was full, so it can retry with the clause when too few were its own.
CALL db.index.fulltext.queryNodes('current_text', $lucene, {limit: $k})
YIELD node, score
WITH count(*) AS seen,
     collect(CASE WHEN node.subject = $subject AND score > 0
       AND ($includeArchived
            OR NOT (coalesce(node.atomisedInto, 0) > 0 AND node.archivedAt IS NOT NULL))
     THEN [node.atomId, node.rev, score, node.atomisedInto, node.archivedAt] END) AS hits
RETURN seen, hits
