// Every atom of the subject at its head, with the head's links (targets as atom
// ids) and lineage, for analysts' graph tools.
MATCH (a:Atom {subject: $subject})-[:HEAD]->(r:Revision)
CALL (r) {
  OPTIONAL MATCH (r)-[l:LINK]->(t)
  WHERE NOT coalesce(l.unavailable, false) AND NOT t:Unavailable
  RETURN collect(CASE WHEN l IS NULL THEN null
                 ELSE {dst: t.atomId, role: l.role, at: l.at, required: l.required} END) AS links
}
RETURN a.atomId AS atomId, r.rev AS rev, r.state AS state, r.text AS text,
       r.atomOf AS atomOf, links
ORDER BY atomId
