// How many heads the reembed run $migrationId still has to embed, of how many.
MATCH (r:Revision:Current)
WHERE r.embedding IS NOT NULL
RETURN count(r) AS total,
       count(CASE WHEN coalesce(r.reembedId, '') <> $migrationId THEN 1 END) AS pending
