// The subject is indexed too so the Lucene query can filter by it: post-filtering
// a global top-k would lose recall for small subjects in a shared database.
CREATE FULLTEXT INDEX current_text IF NOT EXISTS
FOR (r:Current) ON EACH [r.text, r.subject]
