// Head revision, archive flags and usage state of every retrieval-graph node.
UNWIND $atomIds AS aid
MATCH (a:Atom {subject: $subject, atomId: aid})-[:HEAD]->(r:Current)
OPTIONAL MATCH (u:UsageState {subject: $subject, policy: $policy, atomId: aid,
                              rev: r.rev, modelId: $modelId})
RETURN aid AS atomId, r.rev AS rev, r.atomisedInto AS atomisedInto,
       r.archivedAt AS archivedAt, u.state AS usage
