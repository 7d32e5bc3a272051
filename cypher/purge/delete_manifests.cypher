// Read manifests that presented a purged revision (their digest covers its body).
UNWIND $atomIds AS id
MATCH (:Atom {subject: $subject, atomId: id})-[:HAS_REVISION]->(:Revision)
      <-[:PRESENTS]-(m:Manifest)
WHERE m.subject = $subject
WITH DISTINCT m
DETACH DELETE m
RETURN count(*) AS deleted
