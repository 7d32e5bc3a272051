"""The typed graph's cost estimate (API-3): connections by `first`, union branches by max."""

from __future__ import annotations

import pytest
from graphql import parse

from graphsvc.api.document_limits import LIST_ESTIMATE, estimate_cost
from graphsvc.api.schema import build_schema
from graphsvc.settings import Settings

SCHEMA = build_schema(Settings())._schema
DEFAULT_FIRST = 20


def cost(query: str, variables: dict[str, object] | None = None, name: str | None = None) -> int:
    return estimate_cost(SCHEMA, parse(query), name, variables, DEFAULT_FIRST)


@pytest.mark.req("API-3")
def test_connections_count_first_times_and_default_when_missing() -> None:
    # atoms 1 + first × (edges 1 + node 1); scalars are free.
    assert cost("{ atoms(first: 5) { edges { node { atomId } } } }") == 1 + 5 * 2
    assert cost("{ atoms { edges { cursor } } }") == 1 + DEFAULT_FIRST * 1
    assert cost("query($n: Int) { atoms(first: $n) { edges { cursor } } }", {"n": 7}) == 8
    assert cost("{ atoms(first: 0) { edges { node { atomId } } pageInfo { hasNextPage } } }") == 1


@pytest.mark.req("API-3")
def test_nesting_multiplies_and_union_branches_count_the_costliest() -> None:
    nested = """{ atoms(first: 10) { edges { node { head { links(first: 4) { edges { node {
      target { ... on Revision { citations { source { uri } } } ... on Atom { state } }
    } } } } } } } }"""
    # link: edges+node+target(1 + max(Revision: citations 1 + 10×source 1 = 11, Atom: 0)).
    per_link = 2 + (1 + (1 + LIST_ESTIMATE * 1))
    per_atom = 2 + 1 + (1 + 4 * per_link)  # edges, node, head, links
    assert cost(nested) == 1 + 10 * per_atom


@pytest.mark.req("API-3")
def test_fragments_ids_and_operation_names_are_followed() -> None:
    q = """
    fragment A on Atom { head { rev } }
    query One { atom(atomId: "x") { ...A } }
    query Two($ids: [ID!]!) { nodes(ids: $ids) { id ... on Atom { ...A } } }
    """
    assert cost(q, name="One") == 1 + 1
    assert cost(q, {"ids": ["a", "b", "c"]}, name="Two") == 1 + 3 * 1
