// Take the subject's entity-index lock until commit: every change of the index
// (a write's mentions, an atomisation, a purge, a rebuild batch) holds it, so an
// entity found without mentions is deleted while nobody is adding one.
UNWIND $subjects AS s
MERGE (l:EntityLock {subject: s})
SET l.by = $by
RETURN count(l) AS locked
