// A live session of this binding (another binding's, or an expired one, does not
// match): its idle timeout starts again. Returns no row when there is none.
MATCH (s:McpSession {subject: $subject, sessionId: $sessionId})
WHERE s.expiresAt > $now AND s.actorKind = $actorKind AND s.actorId = $actorId
  AND s.policy = $policy AND s.authGeneration = $authGeneration
SET s.expiresAt = $expiresAt
RETURN s.sessionId AS sessionId
