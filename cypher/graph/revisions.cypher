// The given revisions of the subject (DataLoader batch); missing ones are left out.
UNWIND $refs AS x
MATCH (a:Atom {subject: $subject, atomId: x.atomId})-[:HAS_REVISION]->
      (r:Revision {rev: x.rev})
RETURN r {.atomId, .rev, .state, .text, .tokens, .digest, .createdAt, .actorKind, .actorId,
          .operationId, .atomisedInto, .archivedAt, atomOf: coalesce(r.atomOf, a.atomOf),
          head: a.headRev = r.rev} AS revision
