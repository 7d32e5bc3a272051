CREATE INDEX mcp_session_expires IF NOT EXISTS FOR (s:McpSession) ON (s.expiresAt)
