// Whether the subject holds any atom at all (the CLI warns when a search or read of a
// subject without one answers nothing: usually a misspelt --subject). The atom key's
// index (subject, atomId) finds the first one; LIMIT 1 stops there.
OPTIONAL MATCH (a:Atom {subject: $subject})
WITH a LIMIT 1
RETURN a IS NOT NULL AS found
