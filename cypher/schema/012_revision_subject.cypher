CREATE INDEX revision_subject IF NOT EXISTS FOR (r:Revision) ON (r.subject)
