// Every MCP session window of the subject forgets the purged atoms (MCP-1, LNK-6):
// its revision and written entries that name one, and the entries of manifests this
// purge deleted (they presented a purged revision), so a later change of the session
// neither declares them nor keeps their ids on disk. Run after delete_manifests, in
// the erase step's transaction.
MATCH (s:McpSession {subject: $subject})
WITH s, coalesce(s.shown, []) AS window
WITH s, window, [k IN window WHERE
  CASE
    WHEN k STARTS WITH 'm:'
      THEN EXISTS { MATCH (:Manifest {subject: $subject, manifestId: substring(k, 2)}) }
    ELSE NOT substring(substring(k, 4), size(split(substring(k, 4), ':')[0]) + 1) IN $atomIds
  END] AS kept
WHERE size(kept) < size(window)
SET s.shown = kept
RETURN count(s) AS sessions
