// A new purge epoch expires every cursor of the subject (CUR-2).
MERGE (s:SubjectState {subject: $subject})
SET s.purgeEpoch = coalesce(s.purgeEpoch, 0) + 1
RETURN s.purgeEpoch AS purgeEpoch
