CREATE CONSTRAINT input_key IF NOT EXISTS FOR (i:Input) REQUIRE (i.subject, i.tokenId) IS UNIQUE
