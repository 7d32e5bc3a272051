CREATE INDEX evaluation_subject_expires IF NOT EXISTS FOR (e:Evaluation) ON (e.subject, e.expiresAt)
