// The entities of one subject a query's keys may name (ENT-4 with ENT-6), for
// graphsvc.core.entity_resolution.resolve_query: those whose key's variant (hyphens
// as spaces) is one of $variants, and the full forms (two or more words) whose first
// or last word or initials (every word's, or those of the words not in $joiners) is
// one of them; each with the forms its mentions use and the types they give.
MATCH (e:Entity {subject: $subject})
WITH e, [w IN split(replace(e.key, '-', ' '), ' ') WHERE w <> ''] AS words
WITH e, words,
     reduce(s = '', w IN words | CASE s WHEN '' THEN w ELSE s + ' ' + w END) AS variant
WHERE variant IN $variants
   OR (size(words) > 1
       AND (words[0] IN $variants OR words[-1] IN $variants
            OR reduce(s = '', w IN words | s + left(w, 1)) IN $variants
            OR reduce(s = '', w IN [x IN words WHERE NOT x IN $joiners] | s + left(w, 1))
               IN $variants))
RETURN e.key AS key,
       COLLECT { MATCH (e)<-[m:MENTIONS]-(:Revision) RETURN DISTINCT coalesce(m.form, e.key) }
         AS forms,
       COLLECT { MATCH (e)<-[m:MENTIONS]-(:Revision) RETURN DISTINCT m.type } AS types
ORDER BY key
