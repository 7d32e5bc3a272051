MATCH (m:GraphsvcMeta {key: 'vectorIndex'})
DELETE m
RETURN count(*) AS cleared
