// The change feed's record of a purge (docs/time-travel.md), in the erase step's
// transaction: the next number of the subject's ChangeSequence, the operator, the
// time and how many atoms were erased — never which (purge is erasure).
MERGE (q:ChangeSequence {subject: $subject})
  ON CREATE SET q.last = 0
SET q.last = q.last + 1
CREATE (c:Change {subject: $subject, seq: q.last, operationId: $operationId,
                  kind: 'purge', actorKind: $actorKind, actorId: $actorId, at: $now,
                  created: [], revised: [], retired: [], archived: [], atomIds: [],
                  purged: $purged})
RETURN c.seq AS seq
