CREATE CONSTRAINT usage_state_key IF NOT EXISTS FOR (u:UsageState) REQUIRE (u.subject, u.policy, u.atomId, u.rev, u.modelId) IS UNIQUE
