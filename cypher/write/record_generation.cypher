UNWIND $gens AS g
MATCH (r:Revision {subject: $subject, atomId: g.atomId, rev: g.rev})
MATCH (i:Input {subject: $subject, tokenId: g.tokenId})
FOREACH (_ IN CASE WHEN g.kind = 'generated' THEN [1] ELSE [] END |
  CREATE (r)-[:GENERATED_FROM]->(i))
FOREACH (_ IN CASE WHEN g.kind = 'decided' THEN [1] ELSE [] END |
  CREATE (r)-[:DECIDED_FROM]->(i))
RETURN count(*) AS recorded
