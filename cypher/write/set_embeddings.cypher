// The embeddings of a batch's new heads, computed while the rest of the transaction ran.
UNWIND $rows AS x
MATCH (n:Revision:Current {subject: $subject, atomId: x.atomId, rev: x.rev})
SET n.embedding = x.embedding
