// The change feed (docs/time-travel.md): one sequence per subject; the MERGE that
// increments it must find the one node, never create a second.
CREATE CONSTRAINT change_sequence_key IF NOT EXISTS FOR (q:ChangeSequence) REQUIRE (q.subject) IS UNIQUE
