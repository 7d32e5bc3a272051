CREATE INDEX manifest_subject_created IF NOT EXISTS FOR (m:Manifest) ON (m.subject, m.createdAt)
