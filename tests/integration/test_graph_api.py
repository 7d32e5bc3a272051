"""The typed graph (issue 16, docs/graphql.md): Node ids, connections, links, citations.

In-process schema execution (strawberry ``schema.execute``) against the real Neo4j.
"""

from __future__ import annotations

from graph_support import gql_ok, small_graph

from graphsvc.core.binding import Binding
from graphsvc.service import Service

ATOM_WALK = """
query($id: ID!) {
  atom(atomId: $id) {
    id atomId state createdAt
    head {
      id rev state text tokens head actor { kind id } operationId
      links {
        edges { cursor node {
          role at required orderKey unavailable
          from { atomId rev }
          target {
            __typename
            ... on Revision { atomId rev text }
            ... on Atom { atomId head { rev text } }
          }
        } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
      citations { ordinal verified range { start end unit } source { id uri version digest } }
    }
  }
}
"""


def test_atom_walk_resolves_typed_link_targets(service: Service, human: Binding) -> None:
    g = small_graph(service, human)
    data = gql_ok(service, human, ATOM_WALK, id=g.b.atom_id)
    print(data)
    assert data["atom"]["atomId"] == g.b.atom_id
