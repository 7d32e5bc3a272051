// ENT-6: whether the subject holds a name that could confirm any of these tentative
// forms ($forms, hyphen-free keys): a full form (two or more words, hyphens as
// spaces) that is one of them, or whose first word, last word or initials (every
// word's, or content words' without $joiners) is one. A superset of
// confirm_tentative's rule over entity keys alone (no mention is read), so a write of
// plain sentences that cannot confirm anything settles nothing and takes no lock.
MATCH (e:Entity {subject: $subject})
WITH [x IN split(replace(e.key, '-', ' '), ' ') WHERE x <> ''] AS ws
WHERE size(ws) > 1
WITH ws,
     reduce(s = head(ws), x IN tail(ws) | s + ' ' + x) AS full,
     reduce(s = '', x IN ws | s + left(x, 1)) AS every,
     reduce(s = '', x IN [y IN ws WHERE NOT y IN $joiners] | s + left(x, 1)) AS content
WHERE any(f IN $forms WHERE f IN [full, ws[0], ws[-1], every, content])
RETURN true AS fits
LIMIT 1
