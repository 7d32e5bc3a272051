// Every current head of one subject, for the process's mirror
// (graphsvc.store.head_mirror): one row per head, each with `size` (the number of
// heads, counted up to $max + 1). A subject of more than $max heads gets one row
// with `size` alone (its searches ask the indexes), an empty one a row of nulls
// with size 0.
CALL () {
  MATCH (n:Revision:Current {subject: $subject})
  WITH n LIMIT $max + 1
  RETURN count(n) AS size
}
OPTIONAL CALL (size) {
  WITH size WHERE size <= $max
  MATCH (n:Revision:Current {subject: $subject})
  RETURN n.atomId AS atomId, n.rev AS rev, n.text AS text, n.atomisedInto AS atomisedInto,
         n.archivedAt AS archivedAt, n.embedding AS embedding
}
RETURN size, atomId, rev, text, atomisedInto, archivedAt, embedding
