OPTIONAL MATCH (e:Evaluation {subject: $subject, evalId: $evalId})
RETURN e.payload AS payload
