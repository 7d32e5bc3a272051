// Time travel (docs/time-travel.md): the head of an atom as of T is the newest
// revision with createdAt <= T; equality on (subject, atomId) and a range on createdAt
// seek this index instead of reading the atom's whole history.
CREATE INDEX revision_atom_created IF NOT EXISTS FOR (r:Revision) ON (r.subject, r.atomId, r.createdAt)
