CREATE CONSTRAINT manifest_key IF NOT EXISTS FOR (m:Manifest) REQUIRE (m.subject, m.manifestId) IS UNIQUE
