// The embeddings of some of the subject's current heads (lexical candidates whose
// embedding did not come with the fulltext rows): [atomId, embedding] pairs.
UNWIND $atomIds AS aid
MATCH (:Atom {subject: $subject, atomId: aid})-[:HEAD]->(r:Current)
RETURN r.atomId AS atomId, r.embedding AS embedding
