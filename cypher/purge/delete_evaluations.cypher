// Frozen evaluations hold refs and scores that may name purged atoms.
MATCH (e:Evaluation {subject: $subject})
DETACH DELETE e
RETURN count(*) AS deleted
