// A frozen evaluation for later pages (CUR-1). Auxiliary state only (CORE-2):
// it holds refs and numbers, never bodies.
CREATE (e:Evaluation {subject: $subject, evalId: $evalId, payload: $payload,
                      expiresAt: $expiresAt})
WITH e
OPTIONAL MATCH (old:Evaluation {subject: $subject}) WHERE old.expiresAt < $now
DETACH DELETE old
RETURN count(*) AS saved
