CREATE INDEX usage_subject_policy IF NOT EXISTS FOR (u:UsageState) ON (u.subject, u.policy)
