// Remove the Input record of an atomisation that did not commit (nothing was
// written with its token), so a refused atomisation leaves nothing behind.
MATCH (i:Input {subject: $subject, tokenId: $tokenId})
WHERE NOT (i)<-[:GENERATED_FROM|DECIDED_FROM|USED_INPUT|INHERITS]-()
DETACH DELETE i
RETURN count(*) AS discarded
