CREATE CONSTRAINT mcp_session_key IF NOT EXISTS FOR (s:McpSession) REQUIRE (s.subject, s.sessionId) IS UNIQUE
