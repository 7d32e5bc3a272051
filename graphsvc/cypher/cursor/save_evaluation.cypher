// A frozen evaluation for later pages (CUR-1). Auxiliary state only (CORE-2):
// it holds refs and numbers, never bodies.
CREATE (e:Evaluation {subject: $subject, evalId: $evalId, payload: $payload,
                      expiresAt: $expiresAt})
WITH e
CALL (e) {
  MATCH (old:Evaluation {subject: $subject})
  WHERE old.expiresAt < $now
  WITH old LIMIT 50
  DETACH DELETE old
  RETURN count(*) AS expired
}
RETURN count(e) AS saved
