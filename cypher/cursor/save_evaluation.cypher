// A frozen evaluation for later pages (CUR-1). Auxiliary state only (CORE-2):
// it holds refs and numbers, never bodies. It is stored after the answer that hands
// out its cursor (ops/cursors.Pager.save_later), so not while a purge of the subject
// is unfinished, nor once one has finished since the evaluation ($purgeEpoch): it
// could name what the purge erased (LNK-6).
OPTIONAL MATCH (p:PurgeMarker {subject: $subject})
WITH count(p) AS pending
OPTIONAL MATCH (s:SubjectState {subject: $subject})
WITH pending, coalesce(s.purgeEpoch, 0) AS epoch
WHERE pending = 0 AND epoch = $purgeEpoch
CREATE (e:Evaluation {subject: $subject, evalId: $evalId, payload: $payload,
                      expiresAt: $expiresAt})
WITH e
CALL (e) {
  MATCH (old:Evaluation {subject: $subject})
  WHERE old.expiresAt < $now
  WITH old LIMIT 50
  DETACH DELETE old
  RETURN count(*) AS expired
}
RETURN count(e) AS saved
