CREATE CONSTRAINT subject_state_key IF NOT EXISTS FOR (s:SubjectState) REQUIRE (s.subject) IS UNIQUE
