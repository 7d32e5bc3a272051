// End a session of this binding: its window is deleted (MCP-1).
MATCH (s:McpSession {subject: $subject, sessionId: $sessionId})
WHERE s.actorKind = $actorKind AND s.actorId = $actorId AND s.policy = $policy
DELETE s
RETURN count(*) AS closed
