// Sources naming a purged atom (their digest may be the purged body's digest),
// and sources that only purged revisions or Inputs cited (left without a citer).
MATCH (s:Source)
WHERE s.subject = $subject AND s.sourceKey IS NOT NULL
  AND (s.uri IN [id IN $atomIds | 'atom:' + id]
       OR (EXISTS {
             MATCH (s)<-[:CITES]-(x)
             WHERE (x:Revision AND x.atomId IN $atomIds) OR (x:Input AND x.tokenId IN $tokenIds)
           }
           AND NOT EXISTS {
             MATCH (s)<-[:CITES]-(y)
             WHERE NOT ((y:Revision AND y.atomId IN $atomIds)
                        OR (y:Input AND y.tokenId IN $tokenIds))
           }))
DETACH DELETE s
RETURN count(*) AS deleted
