// Derived edges of the second kind (ENT-4, measured, off by default): each seed's
// $k most similar current heads of the subject by stored embedding (exact cosine,
// the subject's heads scanned once per seed), with the reached heads' facts.
UNWIND $atomIds AS aid
MATCH (:Atom {subject: $subject, atomId: aid})-[:HEAD]->(s:Current)
WHERE s.embedding IS NOT NULL
CALL (s) {
  MATCH (h:Revision:Current {subject: $subject})
  WHERE h <> s AND h.embedding IS NOT NULL AND size(h.embedding) = size(s.embedding)
  WITH h, vector.similarity.cosine(s.embedding, h.embedding) AS sim
  ORDER BY sim DESC
  LIMIT $k
  RETURN collect([h.atomId, h.rev, h.atomisedInto, h.archivedAt]) AS near
}
RETURN aid, near
