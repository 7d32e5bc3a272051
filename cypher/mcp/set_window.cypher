// Store a live session's window as merged by the caller from what it read with
// lock_window in the same transaction (most recent first, bounded).
MATCH (s:McpSession {subject: $subject, sessionId: $sessionId})
WHERE s.expiresAt > $now AND s.actorKind = $actorKind AND s.actorId = $actorId
  AND s.policy = $policy AND s.authGeneration = $authGeneration
SET s.shown = $shown, s.expiresAt = $expiresAt
RETURN size(s.shown) AS size
