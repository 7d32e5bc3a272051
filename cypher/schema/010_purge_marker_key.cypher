CREATE CONSTRAINT purge_marker_key IF NOT EXISTS FOR (p:PurgeMarker) REQUIRE (p.subject, p.atomId) IS UNIQUE
