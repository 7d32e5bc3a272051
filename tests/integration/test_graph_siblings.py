"""Typed siblings of JSON fields: SearchHit.breakdown, ReadResult.manifestInfo,
diagnosticsList on search, read and inspect. Each must say what its JSON field says."""

from __future__ import annotations

from typing import Any

import pytest
from graph_support import gql_ok, small_graph

from graphsvc.core.binding import Binding
from graphsvc.service import Service


def _entries(diagnostics: dict[str, Any]) -> list[dict[str, Any]]:
    parts = ("acquisition", "validation", "evaluation", "selection")
    return [
        {"section": part.upper(), "key": k, "value": diagnostics[part][k]}
        for part in parts
        if isinstance(diagnostics.get(part), dict)
        for k in sorted(diagnostics[part])
    ] + [
        {"section": "OTHER", "key": k, "value": diagnostics[k]}
        for k in sorted(set(diagnostics) - set(parts))
    ]


@pytest.mark.req("API-6", "CUR-3")
def test_search_breakdown_and_diagnostics_list_match_their_json(
    service: Service, human: Binding
) -> None:
    small_graph(service, human)
    data = gql_ok(
        service,
        human,
        """query { search(query: "alpha handbook") {
          hits { scoreBreakdown breakdown { match semantic lexical usage usageFactor base
                 propagatedShare entityShare candidate } }
          diagnostics diagnosticsList { section key value } } }""",
    )["search"]
    assert data["hits"]
    for hit in data["hits"]:
        assert set(hit["breakdown"]) == set(hit["scoreBreakdown"])
        want = {k: hit["scoreBreakdown"][k] for k in hit["breakdown"]}
        assert hit["breakdown"] == pytest.approx(want)
    assert data["diagnosticsList"] == _entries(data["diagnostics"])
    assert {e["section"] for e in data["diagnosticsList"]} >= {"ACQUISITION", "EVALUATION"}


@pytest.mark.req("API-6", "MAN-1")
def test_read_manifest_info_and_inspect_diagnostics_list_match_their_json(
    service: Service, human: Binding
) -> None:
    g = small_graph(service, human)
    read = gql_ok(
        service,
        human,
        """query { read(query: "alpha", memoryTokenBudget: 2000) {
          manifest diagnostics diagnosticsList { section key value }
          manifestInfo { id contractVersion query evaluatedAt embeddingModel digest
            formatVersion presented { atomId rev } watchedHeads { atomId rev }
            ranges { ref uri version start end unit } versions
            watchedQueries { query evaluatedAt } } } }""",
    )["read"]
    m, info = read["manifest"], read["manifestInfo"]
    assert info["id"] == m["id"] and info["contractVersion"] == m["contractVersion"] == 2
    assert info["query"] == m["acquisition"]["query"] == "alpha"
    assert info["evaluatedAt"] == pytest.approx(m["acquisition"]["evaluatedAt"])
    assert info["embeddingModel"] == m["acquisition"]["indexState"]["embeddingModel"]
    assert info["digest"] == m["presentation"]["digest"]
    assert info["formatVersion"] == m["presentation"]["formatVersion"]
    assert info["presented"] == m["presentation"]["revisions"] and info["presented"]
    assert info["watchedHeads"] == m["watches"]["heads"]
    assert info["ranges"] == m["presentation"]["ranges"]
    assert info["versions"] == m["acquisition"]["versions"] and info["versions"]
    assert info["watchedQueries"] == m["watches"]["queries"] and info["watchedQueries"]
    # Every part of the manifest has its field, but the two a read leaves null.
    assert m["generation"] is None and m["acknowledgement"] is None
    assert set(m) == {"id", "contractVersion", "acquisition", "presentation", "watches"} | {
        "generation",
        "acknowledgement",
    }
    assert set(m["acquisition"]) == {"query", "evaluatedAt", "indexState", "versions"}
    assert set(m["presentation"]) == {"revisions", "digest", "formatVersion", "ranges"}
    assert set(m["watches"]) == {"heads", "queries"}
    assert read["diagnosticsList"] == _entries(read["diagnostics"])
    inspect = gql_ok(
        service,
        human,
        "query($id: ID!) { inspect(atomId: $id) { diagnostics "
        "diagnosticsList { section key value } } }",
        id=g.b.atom_id,
    )["inspect"]
    assert inspect["diagnosticsList"] == _entries(inspect["diagnostics"])
    assert [e["section"] for e in inspect["diagnosticsList"]].count("SELECTION") >= 1
