// Take each subject's change-sequence lock until commit without numbering a change:
// a rebuild batch holds it before the entity lock, as every writer of the subject
// does (a write that brings only tentative mentions relies on it, ENT-6).
UNWIND $subjects AS s
MERGE (q:ChangeSequence {subject: s})
  ON CREATE SET q.last = 0
SET q.lockedBy = $by
RETURN count(q) AS held
