// ENT-6: the tentative mentions of the subject's current heads (sentence openings
// their text alone could not tell as names; `tentative` holds them as JSON), and the
// tentative mention edges each such head has now, as [form, entity key].
MATCH (r:Revision:Current {subject: $subject})
WHERE r.tentative IS NOT NULL
RETURN r.atomId AS atomId, r.rev AS rev, r.tentative AS tentative,
       COLLECT {
         MATCH (r)-[m:MENTIONS]->(e:Entity) WHERE m.tentative RETURN [m.form, e.key]
       } AS edges
ORDER BY atomId
