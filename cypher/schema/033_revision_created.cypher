// Incremental export (`graphsvc export --since`) and as-of export read the revisions
// of a subject by creation time: equality on subject and a range on createdAt.
CREATE INDEX revision_subject_created IF NOT EXISTS FOR (r:Revision) ON (r.subject, r.createdAt)
