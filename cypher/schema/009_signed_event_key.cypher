CREATE CONSTRAINT signed_event_key IF NOT EXISTS FOR (e:SignedEvent) REQUIRE (e.subject, e.sequence) IS UNIQUE
