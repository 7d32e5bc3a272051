MATCH (e:SignedEvent {subject: $subject})
RETURN e.sequence AS sequence, e.prevHash AS prevHash, e.type AS type,
       e.payload AS payload, e.signedAt AS signedAt, e.keyId AS keyId,
       e.signature AS signature, e.hash AS hash
ORDER BY e.sequence DESC
LIMIT 1
