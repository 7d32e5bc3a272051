// ENT-6: the tentative mentions of some current heads of one subject ($atomIds: the
// heads a write brings when the subject's forms stay as they were), and the tentative
// mention edges each has now, as [form, entity key] (as entities/tentative).
MATCH (r:Revision:Current {subject: $subject})
WHERE r.atomId IN $atomIds AND r.tentative IS NOT NULL
RETURN r.atomId AS atomId, r.rev AS rev, r.tentative AS tentative,
       COLLECT {
         MATCH (r)-[m:MENTIONS]->(e:Entity) WHERE m.tentative RETURN [m.form, e.key]
       } AS edges
ORDER BY atomId
