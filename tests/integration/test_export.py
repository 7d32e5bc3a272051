"""Analysts' export (API-4): a subject's graph through networkx, GraphML and node-link.

The graph comes from the export (:meth:`graphsvc.service.Service.export_graph`),
the one path ``graphsvc export`` takes.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import networkx as nx
import pytest

from graphsvc.core.binding import Binding
from graphsvc.inputs.models import parse_changes
from graphsvc.service import Service


@pytest.mark.req("API-4")
def test_export_graph_has_heads_and_links(service: Service, human: Binding, tmp_path: Path) -> None:
    out = service.write(
        human,
        parse_changes(
            [
                {
                    "id": "a",
                    "op": "create",
                    "content": {"text": "A", "links": [{"role": "r1", "target": {"local": "b"}}]},
                    "sources": [],
                },
                {
                    "id": "b",
                    "op": "create",
                    "content": {
                        "text": "B",
                        "links": [{"role": "r2", "target": {"local": "a", "at": "logical"}}],
                    },
                    "sources": [],
                },
            ]
        ),
    )
    a, b = out.changes["a"].atom_id, out.changes["b"].atom_id
    buf = io.StringIO()
    service.export_graph(human, "node-link", buf)
    g = nx.node_link_graph(json.loads(buf.getvalue()), edges="edges")
    assert set(g.nodes) == {a, b}
    assert {g.nodes[n]["kind"] for n in g.nodes} == {"atom"}
    edges = {(u, v, d["role"]) for u, v, d in g.edges(data=True)}
    assert edges == {(a, b, "r1"), (b, a, "r2")}
    path = tmp_path / "g.graphml"
    nx.write_graphml(g, path)
    back = nx.read_graphml(path)
    assert set(back.nodes) == {a, b}
    data = json.loads(json.dumps(nx.node_link_data(g, edges="edges")))
    assert {n["id"] for n in data["nodes"]} == {a, b}
