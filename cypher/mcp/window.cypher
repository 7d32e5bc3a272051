// A live session's window (most recent first); no row when the session is gone.
MATCH (s:McpSession {subject: $subject, sessionId: $sessionId})
WHERE s.expiresAt > $now AND s.actorKind = $actorKind AND s.actorId = $actorId
  AND s.policy = $policy AND s.authGeneration = $authGeneration
RETURN s.shown AS shown
