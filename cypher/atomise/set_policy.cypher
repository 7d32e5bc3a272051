// One namespace policy per subject + policy name; the SubjectState write
// serialises concurrent setters so MERGE never makes two.
MERGE (s:SubjectState {subject: $subject})
SET s.policyLock = $now
MERGE (p:NamespacePolicy {subject: $subject, policy: $policy})
SET p.json = $json, p.updatedAt = $now, p.updatedBy = $actorId
RETURN p.json AS json
