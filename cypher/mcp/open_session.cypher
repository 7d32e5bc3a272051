// A new MCP session (SPEC §17, MCP-1) of one binding, with an empty window; sessions
// of any subject that expired are removed on the way (a bounded number per call),
// so nothing of a session outlives it by much more than its idle timeout.
CALL () {
  MATCH (old:McpSession) WHERE old.expiresAt <= $now
  WITH old LIMIT 64
  DELETE old
  RETURN count(*) AS expired
}
CREATE (s:McpSession {subject: $subject, sessionId: $sessionId, actorKind: $actorKind,
                      actorId: $actorId, policy: $policy, authGeneration: $authGeneration,
                      createdAt: $now, expiresAt: $expiresAt, shown: []})
RETURN s.sessionId AS sessionId, expired
