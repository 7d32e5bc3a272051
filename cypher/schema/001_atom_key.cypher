CREATE CONSTRAINT atom_key IF NOT EXISTS FOR (a:Atom) REQUIRE (a.subject, a.atomId) IS UNIQUE
