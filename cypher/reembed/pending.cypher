// The next heads whose embedding the reembed run $migrationId has not replaced
// yet (a head written meanwhile, embedded by the old model, is among them).
MATCH (r:Revision:Current)
WHERE r.embedding IS NOT NULL AND coalesce(r.reembedId, '') <> $migrationId
RETURN r.subject AS subject, r.atomId AS atomId, r.rev AS rev, r.text AS text
LIMIT $limit
