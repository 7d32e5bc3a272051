"""``graphsvc export``: a subject's graph as GraphML or node-link JSON (networkx)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import networkx as nx

from graphsvc.clicmd.common import add_binding_args, binding_from_args, connected_service, emit
from graphsvc.settings import Settings
from graphsvc.store.connection import Database

__all__ = ["build_graph", "register"]


def register(sub: Any) -> None:
    p = sub.add_parser("export", help="export a subject's graph for analysts (networkx)")
    add_binding_args(p)
    p.add_argument("--format", choices=["graphml", "node-link"], default="graphml")
    p.add_argument("-o", "--output", required=True, help="file to write")
    p.set_defaults(handler=_run)


def build_graph(db: Database, subject: str) -> nx.MultiDiGraph:
    """Atoms at their heads as nodes; head links and atomOf lineage as edges."""
    g: nx.MultiDiGraph = nx.MultiDiGraph(subject=subject)
    rows = db.read("export/graph", subject=subject)
    for row in rows:
        g.add_node(
            row["atomId"],
            rev=row["rev"],
            state=row["state"],
            text=row["text"] or "",
            atomOf=row["atomOf"] or "",
        )
    for row in rows:
        for link in row["links"]:
            if link["dst"] in g:
                g.add_edge(
                    row["atomId"],
                    link["dst"],
                    role=link["role"],
                    at=link["at"],
                    required=bool(link["required"]),
                )
        if row["atomOf"] and row["atomOf"] in g:
            g.add_edge(row["atomId"], row["atomOf"], role="derives_from", at="lineage")
    return g


def _run(args: argparse.Namespace, settings: Settings) -> int:
    binding = binding_from_args(args)
    with connected_service(settings) as service:
        g = build_graph(service.db, binding.subject)
    out = Path(args.output)
    if args.format == "graphml":
        nx.write_graphml(g, out)
    else:
        out.write_text(json.dumps(nx.node_link_data(g, edges="edges"), indent=1))
    emit(
        args,
        {"nodes": g.number_of_nodes(), "edges": g.number_of_edges(), "path": str(out)},
        f"wrote {g.number_of_nodes()} nodes and {g.number_of_edges()} edges to {out}",
    )
    return 0
