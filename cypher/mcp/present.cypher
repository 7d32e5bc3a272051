// One call's bookkeeping for a live session of this binding (MCP-1), in one query:
// the session is checked, its idle timeout starts again and what the call showed
// ($keys: most recent first, each entry once) goes in front of its window; an
// entry already there for the same manifest or revision is dropped (the newer form
// wins), and the window keeps at most $bound entries. The node is write-locked
// before its window is read, so two calls of one session merge one after the
// other. Returns no row when the session has ended.
MATCH (s:McpSession {subject: $subject, sessionId: $sessionId})
WHERE s.expiresAt > $now AND s.actorKind = $actorKind AND s.actorId = $actorId
  AND s.policy = $policy AND s.authGeneration = $authGeneration
SET s._lock = true
REMOVE s._lock
WITH s, [k IN $keys | CASE WHEN k STARTS WITH 'm:' THEN k ELSE substring(k, 4) END] AS fresh
WITH s, $keys + [k IN coalesce(s.shown, [])
                 WHERE NOT (CASE WHEN k STARTS WITH 'm:' THEN k ELSE substring(k, 4) END) IN fresh]
     AS window
SET s.shown = window[..$bound], s.expiresAt = $expiresAt
RETURN size(s.shown) AS size
