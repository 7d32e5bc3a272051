OPTIONAL MATCH (s:SubjectState {subject: $subject})
RETURN coalesce(s.purgeEpoch, 0) AS purgeEpoch
