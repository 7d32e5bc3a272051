// Purge is erasure: earlier change records lose every ref to the purged atoms (the
// operation stays in the feed, with what it did to other atoms). `redacted` counts
// the refs taken out, so a reader knows the record is not whole.
MATCH (c:Change)
WHERE c.subject = $subject AND any(a IN c.atomIds WHERE a IN $atomIds)
WITH c, [x IN c.created + c.revised + c.retired + c.archived
         WHERE split(x, '@')[0] IN $atomIds] AS gone
SET c.created = [x IN c.created WHERE NOT split(x, '@')[0] IN $atomIds],
    c.revised = [x IN c.revised WHERE NOT split(x, '@')[0] IN $atomIds],
    c.retired = [x IN c.retired WHERE NOT split(x, '@')[0] IN $atomIds],
    c.archived = [x IN c.archived WHERE NOT split(x, '@')[0] IN $atomIds],
    c.atomIds = [a IN c.atomIds WHERE NOT a IN $atomIds],
    c.redacted = coalesce(c.redacted, 0) + size(gone)
RETURN count(c) AS scrubbed
