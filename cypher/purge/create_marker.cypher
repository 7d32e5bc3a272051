// LNK-6: the persisted stop marker. While it stands, public read/write/observe of
// the subject answer PURGE_PENDING (write/purge_pending). It holds ids only.
CREATE (p:PurgeMarker {subject: $subject, atomId: $atomId, startedAt: $now,
                       step: $step, plan: $plan})
RETURN p.atomId AS atomId
