"""Every example query of docs/graphql.md runs: in process, and over HTTP with the
third-party ``gql`` client, which introspects the live server's schema and
validates each query client-side before the server validates and runs it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from atomise_support import THREE_SENTENCES, create, service_with
from conftest import LiveServer
from gql import Client, GraphQLRequest
from gql import gql as parse_gql
from gql.transport.httpx import HTTPXTransport
from graph_support import Small, gql_ok, small_graph
from graphql import GraphQLError, build_schema, find_breaking_changes, parse, validate

from graphsvc.api.graph_ids import encode_id
from graphsvc.core.binding import Binding
from graphsvc.service import Service

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "graphql.md"


def doc_queries() -> dict[str, str]:
    """Operation name → query text of every ```graphql block of the page."""
    blocks = re.findall(r"```graphql\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    out = {}
    for block in blocks:
        name = re.match(r"\s*query\s+(\w+)", block)
        assert name, f"an example without an operation name: {block[:60]}"
        out[name.group(1)] = block
    return out


def _variables(g: Small, parent: str) -> dict[str, dict[str, Any]]:
    return {
        "SearchWalk": {"q": "Beta builds on alpha"},
        "RevisionHistory": {"atomId": g.a.atom_id},
        "WhoCitesSource": {"uri": "https://example.org/handbook", "version": "3"},
        "PointingAt": {"atomId": g.a.atom_id},
        "LineageDag": {"atomId": parent},
        "PageAtoms": {"first": 2},
        "Refetch": {"id": encode_id("Atom", g.a.atom_id)},
    }


def _check(name: str, data: dict[str, Any], g: Small, parent: str) -> None:
    """What each example must show (so an example that silently answers nothing fails)."""
    if name == "SearchWalk":
        hit = next(h for h in data["search"]["hits"] if h["revision"]["atomId"] == g.b.atom_id)
        targets = [e["node"]["target"] for e in hit["revision"]["links"]["edges"]]
        pinned = next(t for t in targets if t["__typename"] == "Revision")
        assert pinned["citations"][0]["source"] == {
            "uri": "https://example.org/handbook",
            "version": "3",
        }
        assert pinned["citations"][0]["range"] == {"start": 0, "end": 12, "unit": "BYTE"}
        assert {t["__typename"] for t in targets} == {"Revision", "Atom"}
    elif name == "RevisionHistory":
        revs = [e["node"]["rev"] for e in data["atom"]["revisions"]["edges"]]
        assert revs == [2, 1]
    elif name == "WhoCitesSource":
        citing = [e["node"]["citing"]["atomId"] for e in data["source"]["citedBy"]["edges"]]
        assert citing == [g.b.atom_id]
    elif name == "PointingAt":
        assert len(data["atom"]["incoming"]["edges"]) == 2
        assert data["atom"]["citedBy"]["edges"][0]["node"]["citing"]["atomId"] == g.b.atom_id
    elif name == "LineageDag":
        derives = [e for e in data["lineageGraph"]["edges"] if e["kind"] == "DERIVES_FROM"]
        assert len(derives) == 3 and {e["signatureStatus"] for e in derives} == {"VERIFIED"}
        assert data["atom"]["head"]["atomisedInto"] == 3
        into = data["atom"]["revision"]["derivedInto"]
        assert len(into) == 3 and {d["signatureStatus"] for d in into} == {"VERIFIED"}
    elif name == "PageAtoms":
        page = data["atoms"]
        assert len(page["edges"]) == 2 and page["pageInfo"]["hasNextPage"] is True
    elif name == "Refetch":
        assert data["node"] == {
            "__typename": "Atom",
            "id": encode_id("Atom", g.a.atom_id),
            "atomId": g.a.atom_id,
            "state": "ACTIVE",
        }
    else:
        raise AssertionError(f"docs/graphql.md has an example no test checks: {name}")


def _data(service: Service, human: Binding) -> tuple[Small, str]:
    g = small_graph(service, human)
    rule = service_with(service, curator="rule")
    parent = create(rule, human, THREE_SENTENCES)
    rule.atomise(human, parent.atom_id, max_atom_tokens=50)
    return g, parent.atom_id


@pytest.mark.req("API-6", "API-5")
def test_every_docs_example_runs_in_process(service: Service, human: Binding) -> None:
    queries = doc_queries()
    assert len(queries) == 7
    g, parent = _data(service, human)
    variables = _variables(g, parent)
    for name, query in queries.items():
        _check(name, gql_ok(service, human, query, **variables[name]), g, parent)


@pytest.mark.req("API-1", "API-6")
def test_gql_client_introspects_validates_and_runs_every_docs_example_over_http(
    service: Service, human: Binding, live_server: LiveServer
) -> None:
    g, parent = _data(service, human)
    variables = _variables(g, parent)
    token = live_server.token_for(human)
    transport = HTTPXTransport(
        url=f"{live_server.url}/graphql",
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )
    client = Client(transport=transport, fetch_schema_from_transport=True)
    with client as session:
        assert client.schema is not None
        # The introspected schema is the checked-in one: nothing breaks either way.
        checked_in = build_schema((ROOT / "schema.graphql").read_text(encoding="utf-8"))
        assert find_breaking_changes(checked_in, client.schema) == []
        assert find_breaking_changes(client.schema, checked_in) == []
        for name, query in doc_queries().items():
            assert validate(client.schema, parse(query)) == []
            data = session.execute(GraphQLRequest(query, variable_values=variables[name]))
            _check(name, data, g, parent)
        # gql validates before sending: a local GraphQLError, not a TransportQueryError.
        with pytest.raises(GraphQLError):
            session.execute(parse_gql('query { atom(atomId: "x") { noSuchField } }'))
