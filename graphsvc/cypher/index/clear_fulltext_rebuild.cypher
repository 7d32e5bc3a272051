MATCH (m:GraphsvcMeta {key: 'fulltextIndex'})
DELETE m
RETURN count(*) AS cleared
