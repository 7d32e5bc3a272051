// The given atoms of the subject with their head revision (typed graph, DataLoader
// batch). Purged atoms are gone, other subjects' atoms do not match: both are simply
// missing from the answer, so the caller cannot tell them apart (no existence oracle).
UNWIND $atomIds AS aid
MATCH (a:Atom {subject: $subject, atomId: aid})-[:HEAD]->(r:Revision)
RETURN a.atomId AS atomId, a.createdAt AS createdAt,
       r {.atomId, .rev, .state, .text, .tokens, .digest, .createdAt, .actorKind, .actorId,
          .operationId, .atomisedInto, .archivedAt, atomOf: coalesce(r.atomOf, a.atomOf),
          head: true} AS head
