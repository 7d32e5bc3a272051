CALL db.awaitIndexes($timeoutSeconds)
