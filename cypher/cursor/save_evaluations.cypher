// Frozen evaluations for later pages (CUR-1), several in one transaction: whatever
// queued while the previous save committed (ops/cursors: group commit). Auxiliary
// state only (CORE-2): they hold refs and numbers, never bodies. Each is stored after
// the answer that hands out its cursor (ops/cursors.Pager.save_later), so not while a
// purge of its subject is unfinished, nor once one has finished since the evaluation
// (its row's purgeEpoch): it could name what the purge erased (LNK-6). Each subject
// saved to also loses up to 50 of its expired evaluations. `saved` lists the ids
// stored.
UNWIND $rows AS row
OPTIONAL MATCH (p:PurgeMarker {subject: row.subject})
WITH row, count(p) AS pending
OPTIONAL MATCH (s:SubjectState {subject: row.subject})
WITH row, pending, coalesce(s.purgeEpoch, 0) AS epoch
WHERE pending = 0 AND epoch = row.purgeEpoch
CREATE (e:Evaluation {subject: row.subject, evalId: row.evalId, payload: row.payload,
                      expiresAt: row.expiresAt})
WITH collect(row.evalId) AS saved, collect(DISTINCT row.subject) AS subjects
CALL (subjects) {
  UNWIND subjects AS subject
  CALL (subject) {
    MATCH (old:Evaluation {subject: subject})
    WHERE old.expiresAt < $now
    WITH old LIMIT 50
    DETACH DELETE old
    RETURN count(*) AS expired
  }
  RETURN sum(expired) AS expired
}
RETURN saved, expired
