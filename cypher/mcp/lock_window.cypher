// A live session's window, write-locked for the rest of the transaction so that two
// calls of one session merge their presentations one after the other.
MATCH (s:McpSession {subject: $subject, sessionId: $sessionId})
WHERE s.expiresAt > $now AND s.actorKind = $actorKind AND s.actorId = $actorId
  AND s.policy = $policy AND s.authGeneration = $authGeneration
SET s._lock = true
REMOVE s._lock
RETURN s.shown AS shown
