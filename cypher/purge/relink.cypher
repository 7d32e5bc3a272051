// LNK-2 safe form: a link of a surviving revision to a purged atom (logical) or
// revision (observed) is re-pointed to the subject's one Unavailable node, with
// `unavailable: true` and the same role/at/required/orderKey/ordinal. No target
// id and no specific reason survive.
UNWIND $atomIds AS id
MATCH (a:Atom {subject: $subject, atomId: id})
CALL (a) {
  MATCH (src:Revision)-[l:LINK]->(a)
  RETURN src, l
  UNION
  MATCH (a)-[:HAS_REVISION]->(:Revision)<-[l:LINK]-(src:Revision)
  RETURN src, l
}
WITH src, l
WHERE src.subject = $subject AND NOT src.atomId IN $atomIds
MERGE (u:Unavailable {subject: $subject})
CREATE (src)-[l2:LINK {role: l.role, at: l.at, required: l.required, orderKey: l.orderKey,
                      ordinal: l.ordinal, unavailable: true}]->(u)
DELETE l
RETURN count(l2) AS relinked
