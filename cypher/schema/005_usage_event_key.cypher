CREATE CONSTRAINT usage_event_key IF NOT EXISTS FOR (e:UsageEvent) REQUIRE (e.subject, e.eventId) IS UNIQUE
