// Serialise appends to the subject's signed-event chain: the unique SubjectState
// node is merged and written, so a second atomisation in the same subject waits
// here until the first commits, then reads the chain's new last event.
MERGE (s:SubjectState {subject: $subject})
SET s.eventChainLock = $operationId
RETURN s.subject AS subject
