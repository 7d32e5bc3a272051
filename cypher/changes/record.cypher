// The change feed's record of one write operation (docs/time-travel.md). The
// subject's ChangeSequence is incremented in the same transaction as the write:
// that takes its write lock until commit, so concurrent writers of one subject take
// their numbers one at a time, in commit order (the feed's total order). Refs are
// stored as 'atomId@rev' strings (a property cannot hold maps); what each revision
// was is read from it: rev 1 created, a retired or archived state retired or
// archived, anything else revised.
MERGE (q:ChangeSequence {subject: $subject})
  ON CREATE SET q.last = 0
SET q.last = q.last + 1
WITH q
CALL () {
  UNWIND $revisions AS x
  MATCH (r:Revision {subject: $subject, atomId: x.atomId, rev: x.rev})
  WITH r ORDER BY r.atomId, r.rev
  WITH collect(r) AS rs
  RETURN [r IN rs WHERE r.rev = 1 | r.atomId + '@' + toString(r.rev)] AS created,
         [r IN rs WHERE r.rev > 1 AND r.state = 'retired'
            | r.atomId + '@' + toString(r.rev)] AS retired,
         [r IN rs WHERE r.rev > 1 AND r.state = 'archived'
            | r.atomId + '@' + toString(r.rev)] AS archived,
         [r IN rs WHERE r.rev > 1 AND NOT r.state IN ['retired', 'archived']
            | r.atomId + '@' + toString(r.rev)] AS revised,
         [r IN rs | r.atomId] AS atomIds
}
CREATE (c:Change {subject: $subject, seq: q.last, operationId: $operationId,
                  kind: coalesce($kind, 'write'), actorKind: $actorKind, actorId: $actorId,
                  at: $now, created: created, revised: revised, retired: retired,
                  archived: archived, atomIds: atomIds, purged: 0})
RETURN c.seq AS seq
