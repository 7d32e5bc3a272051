// The subject is indexed too so the Lucene query can filter by it: post-filtering
// a global top-k would lose recall for small subjects in a shared database.
// Lucene's English analyzer (stop words dropped, Porter stemming): with the default
// `standard-no-stop-words` analyzer the stop words of a question ("what did ... do
// in ...") carried much of its BM25 score (bench/quality.py). A database whose
// index was created with another analyzer keeps it until
// `graphsvc index rebuild --fulltext` (graphsvc/ops/index.py).
CREATE FULLTEXT INDEX current_text IF NOT EXISTS
FOR (r:Current) ON EACH [r.text, r.subject]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
