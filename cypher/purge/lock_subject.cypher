// Serialises purges of one subject: every purge step first writes the subject's
// SubjectState, so two purges (or two resumes) never interleave. Returns the
// stop markers that stand in the subject (ids and steps only).
MERGE (s:SubjectState {subject: $subject})
SET s.lastPurgeAt = $now
WITH s
OPTIONAL MATCH (p:PurgeMarker {subject: $subject})
RETURN collect(CASE WHEN p IS NULL THEN null
                    ELSE {atomId: p.atomId, step: p.step} END) AS markers
