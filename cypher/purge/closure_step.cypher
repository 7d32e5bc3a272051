// One round of the purge dependency closure (LNK-5), over the whole history.
// $atomIds / $tokenIds are the atoms and Inputs newly found affected; the caller
// repeats with what this returns until nothing new appears (a fixpoint).
// Never narrowed by role name or body text; ordinary links are not followed.
CALL () {
  CALL () {
    // Inputs whose basis, watches or presentations name a revision of an affected atom.
    UNWIND $atomIds AS id
    MATCH (:Atom {subject: $subject, atomId: id})-[:HAS_REVISION]->(:Revision)
          <-[:BASIS|WATCHES|PRESENTED]-(i:Input)
    WHERE i.subject = $subject
    RETURN i.tokenId AS tokenId
    UNION
    // Inputs that cite an affected atom as a source (any version).
    MATCH (s:Source)<-[:CITES]-(i:Input)
    WHERE s.subject = $subject AND s.sourceKey IS NOT NULL
      AND s.uri IN [id IN $atomIds | 'atom:' + id] AND i.subject = $subject
    RETURN i.tokenId AS tokenId
    UNION
    // Inputs that inherit an affected Input (transitively, through the fixpoint).
    UNWIND $tokenIds AS tid
    MATCH (:Input {subject: $subject, tokenId: tid})<-[:INHERITS]-(i:Input)
    WHERE i.subject = $subject
    RETURN i.tokenId AS tokenId
  }
  RETURN collect(DISTINCT tokenId) AS inputs
}
CALL () {
  CALL () {
    // Revisions that cite an affected atom as a source (any version).
    MATCH (s:Source)<-[:CITES]-(r:Revision)
    WHERE s.subject = $subject AND s.sourceKey IS NOT NULL
      AND s.uri IN [id IN $atomIds | 'atom:' + id] AND r.subject = $subject
    RETURN r.atomId AS atomId
    UNION
    // Atomisation lineage: atoms derived from a revision of an affected atom.
    UNWIND $atomIds AS id
    MATCH (:Atom {subject: $subject, atomId: id})-[:HAS_REVISION]->(:Revision)
          <-[:DERIVES_FROM]-(r:Revision)
    WHERE r.subject = $subject
    RETURN r.atomId AS atomId
    UNION
    // Imported legacy links (flagged `legacy: true`) to an affected atom or revision.
    UNWIND $atomIds AS id
    MATCH (a:Atom {subject: $subject, atomId: id})
    CALL (a) {
      MATCH (r:Revision)-[l:LINK]->(a) WHERE l.legacy = true
      RETURN r
      UNION
      MATCH (a)-[:HAS_REVISION]->(:Revision)<-[l:LINK]-(r:Revision) WHERE l.legacy = true
      RETURN r
    }
    WITH r WHERE r.subject = $subject
    RETURN r.atomId AS atomId
    UNION
    // Revisions generated or decided from an affected Input.
    UNWIND $tokenIds AS tid
    MATCH (:Input {subject: $subject, tokenId: tid})<-[:GENERATED_FROM|DECIDED_FROM]-(r:Revision)
    WHERE r.subject = $subject
    RETURN r.atomId AS atomId
    UNION
    // TOK-6: a token-less agent revision depends on every input of its batch.
    UNWIND $tokenIds AS tid
    MATCH (:Input {subject: $subject, tokenId: tid})<-[:USED_INPUT]-(:Operation)
          <-[:WRITTEN_BY]-(r:Revision)
    WHERE r.subject = $subject AND r.actorKind = 'agent'
      AND NOT EXISTS { (r)-[:GENERATED_FROM|DECIDED_FROM]->(:Input) }
    RETURN r.atomId AS atomId
  }
  RETURN collect(DISTINCT atomId) AS atoms
}
RETURN inputs, atoms
