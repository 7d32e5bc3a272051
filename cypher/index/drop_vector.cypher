DROP INDEX current_embedding IF EXISTS
