CREATE FULLTEXT INDEX current_text IF NOT EXISTS
FOR (r:Current) ON EACH [r.text]
