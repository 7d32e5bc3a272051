// Current, indexable heads (active, not an archived atomised parent) that the
// extractor $version has not indexed yet, of $subject (null: every subject), and all of them.
MATCH (r:Revision:Current)
WHERE r.state = 'active' AND NOT (coalesce(r.atomisedInto, 0) > 0 AND r.archivedAt IS NOT NULL)
  AND ($subject IS NULL OR r.subject = $subject)
RETURN sum(CASE WHEN coalesce(r.entityIndex, '') <> $version THEN 1 ELSE 0 END) AS pending,
       count(r) AS total
