// Erasing an Input erases its token: later use answers TOKEN_INVALID (TOK-3).
UNWIND $tokenIds AS tid
MATCH (i:Input {subject: $subject, tokenId: tid})
DETACH DELETE i
RETURN count(*) AS deleted
