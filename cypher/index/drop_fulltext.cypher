DROP INDEX current_text IF EXISTS
