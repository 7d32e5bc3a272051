OPTIONAL MATCH (a:Atom {subject: $subject, atomId: $atomId})
RETURN a IS NOT NULL AS found
