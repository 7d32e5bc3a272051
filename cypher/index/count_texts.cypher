// What the fulltext index holds: every current revision (text and subject).
MATCH (r:Current)
RETURN count(r) AS entries
