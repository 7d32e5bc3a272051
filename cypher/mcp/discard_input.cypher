// The record of a session's InputToken whose change was refused (MCP-2): deleted with
// its basis, watch and presentation edges, unless a revision was generated from it
// or another token inherits it (then it is a dependency and stays).
MATCH (i:Input {subject: $subject, tokenId: $tokenId})
WHERE NOT ()-[:GENERATED_FROM]->(i) AND NOT ()-[:INHERITS]->(i)
DETACH DELETE i
