"""Analysts' export (issue 17, API-4): every format re-read by the tools analysts use.

One subject holds what an export must carry: an atom whose text has characters XML
1.0 forbids (bell, NUL, a CR), a cited source with a range, a revised atom, a retired
atom, a link to a purged atom (unavailable), and atoms made by atomisation with signed
lineage. Each format is written by the use case, re-read with networkx (GraphML,
node-link) or the csv module, and checked against what was written.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from atomise_support import THREE_SENTENCES, service_with
from write_support import cypher

from graphsvc.core.binding import Binding
from graphsvc.core.views import ExportReport
from graphsvc.errors import PurgePendingError
from graphsvc.inputs.models import parse_changes
from graphsvc.ops.export import unescape_xml_value
from graphsvc.service import Service


def export(service: Service, binding: Binding, fmt: str, target: Any, **kw: Any) -> ExportReport:
    """The analysts' export through the facade (the deployment's keys, none created)."""
    return service.export_graph(binding, fmt, target, **kw)


CONTROL_TEXT = "bell \u0007, NUL \x00, CR \r and a back\\slash \\u0007 in one atom"


def _plain_atom(cid: str, text: str) -> dict[str, Any]:
    return {"id": cid, "op": "create", "content": {"text": text, "links": []}, "sources": []}


def _w(service: Service, binding: Binding, changes: list[dict[str, Any]]) -> Any:
    return service.write(binding, parse_changes(changes)).changes


@pytest.fixture()
def corpus(service: Service, human: Binding) -> dict[str, Any]:
    made = _w(
        service,
        human,
        [
            {
                "id": "ctl",
                "op": "create",
                "content": {
                    "text": CONTROL_TEXT,
                    "links": [
                        {"role": "needs", "target": {"local": "base", "required": True}},
                        {"role": "see", "target": {"local": "old", "at": "logical"}},
                        {"role": "mentions", "target": {"local": "doomed"}},
                    ],
                },
                "sources": [
                    {
                        "uri": "https://example.org/runbook",
                        "version": "7",
                        "range": {"start": 2, "end": 5, "unit": "line"},
                    }
                ],
            },
            _plain_atom("base", "Base fact."),
            _plain_atom("old", "Old fact."),
            _plain_atom("doomed", "To be purged with Zqdoomedname."),
            _plain_atom("ent", "Our friend Caroline met Jon in Boston on 8 May, 2023."),
            _plain_atom("long", THREE_SENTENCES),
        ],
    )
    base = made["base"]
    revised = _w(
        service,
        human,
        [
            {
                "id": "b2",
                "op": "revise",
                "target": {"atomId": base.atom_id, "rev": base.rev},
                "content": {"text": "Base fact, revised.", "links": []},
                "sources": [],
            },
            {
                "id": "r",
                "op": "retire",
                "target": {"atomId": made["old"].atom_id, "rev": made["old"].rev},
            },
        ],
    )
    service.purge(human, made["doomed"].atom_id)
    atomised = service_with(service, curator="rule").atomise(
        human, made["long"].atom_id, max_atom_tokens=50
    )
    return {
        "ctl": made["ctl"].atom_id,
        "base": base.atom_id,
        "base_rev": revised["b2"].rev,
        "old": made["old"].atom_id,
        "doomed": made["doomed"].atom_id,
        "ent": made["ent"].atom_id,
        "long": made["long"].atom_id,
        "parts": list(atomised.atom_ids),
    }


def _check_graph(g: Any, c: dict[str, Any], *, revisions: bool) -> None:
    """The checks every format's re-read graph must pass."""
    kinds = {n: d["kind"] for n, d in g.nodes(data=True)}
    atoms = {n for n, k in kinds.items() if k == "atom"}
    assert atoms == {c["ctl"], c["base"], c["old"], c["long"], c["ent"], *c["parts"]}
    assert c["doomed"] not in g  # purged: gone, and named nowhere
    assert not any(c["doomed"] in str(d) for _, d in g.nodes(data=True))
    # The entity index (ENT-5): entities as nodes, MENTIONS from the heads naming them;
    # nothing of the purged text's entity is left.
    entities = {n: d for n, d in g.nodes(data=True) if d["kind"] == "entity"}
    assert {"entity:caroline", "entity:jon", "entity:boston", "entity:2023-05-08"} <= set(entities)
    assert entities["entity:2023-05-08"]["entityType"] == "date"
    assert entities["entity:2023-05-08"]["label"] == "8 May, 2023"
    assert entities["entity:caroline"]["mentionCount"] == 1
    assert not any("zqdoomed" in str(d).lower() for _, d in g.nodes(data=True))
    named = {v for u, v, d in g.edges(data=True) if d["kind"] == "mentions" and u == c["ent"]}
    assert named == {"entity:caroline", "entity:jon", "entity:boston", "entity:2023-05-08"}
    assert all(
        isinstance(d["count"], int) and kinds[v] == "entity"
        for _, v, d in g.edges(data=True)
        if d["kind"] == "mentions"
    )
    nodes = dict(g.nodes(data=True))
    assert nodes[c["base"]]["rev"] == c["base_rev"] == 2  # ints stay ints
    assert nodes[c["old"]]["state"] == "retired"
    assert nodes[c["long"]]["state"] == "archived"
    assert isinstance(nodes[c["ctl"]]["tokens"], int)
    assert nodes[c["ctl"]]["createdAt"]
    for part in c["parts"]:
        assert nodes[part]["atomOf"] == c["long"]

    edges = [(u, v, d) for u, v, d in g.edges(data=True)]
    links = {(d["role"], d["at"], d["required"]) for u, v, d in edges if d["kind"] == "link"}
    assert links == {
        ("needs", "observed", True),
        ("see", "logical", False),
        ("mentions", "observed", False),
    }
    ghost = [v for u, v, d in edges if d["kind"] == "link" and d["role"] == "mentions"]
    assert kinds[ghost[0]] == "unavailable"
    cites = [(u, v, d) for u, v, d in edges if d["kind"] == "cites"]
    assert len(cites) == 1
    u, v, d = cites[0]
    assert u == c["ctl"] and kinds[v] == "source"
    assert (d["start"], d["end"], d["unit"]) == (2, 5, "line")
    assert nodes[v]["uri"] == "https://example.org/runbook"
    assert nodes[v]["version"] == "7"
    lineage = [(u, v, d) for u, v, d in edges if d["kind"] == "derives_from"]
    assert {u for u, _, _ in lineage} == set(c["parts"])
    assert {v for _, v, _ in lineage} == {c["long"]}
    assert {d["signatureStatus"] for _, _, d in lineage} == {"verified"}
    assert all(isinstance(d["fromRev"], int) and d["keyId"] for _, _, d in lineage)
    revs = {n for n, k in kinds.items() if k == "revision"}
    if revisions:
        assert f"{c['base']}@1" in revs
        assert f"{c['long']}@1" in revs  # archiving made a new revision
        rev_of = {(u, v) for u, v, d in edges if d["kind"] == "revision_of"}
        assert (f"{c['base']}@1", c["base"]) in rev_of
        assert nodes[f"{c['base']}@1"]["text"] == "Base fact."
    else:
        assert revs == set()


@pytest.mark.req("API-4", "ENT-5")
def test_graphml_parses_with_control_characters_and_round_trips(
    service: Service, human: Binding, corpus: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "g.graphml"
    with path.open("w", encoding="utf-8", newline="") as fh:
        report = export(service, human, "graphml", fh, revisions=True, page_size=2)
    assert report.pages >= 3  # really paged
    g = nx.read_graphml(path)
    _check_graph(g, corpus, revisions=True)
    assert g.number_of_nodes() == report.nodes
    assert g.number_of_edges() == report.edges
    ctl = g.nodes[corpus["ctl"]]
    assert ctl["xmlEscaped"] == "label,text"  # the label is cut from the text
    assert unescape_xml_value(ctl["text"]) == CONTROL_TEXT
    assert "xmlEscaped" not in g.nodes[corpus["base"]]
    assert g.graph["subject"] == human.subject
    assert report.signatures == {"verified": 3, "invalid": 0, "unknown_key": 0}


@pytest.mark.req("API-4", "ENT-5")
def test_node_link_json_round_trips(
    service: Service, human: Binding, corpus: dict[str, Any]
) -> None:
    buf = io.StringIO()
    report = export(service, human, "node-link", buf)
    g = nx.node_link_graph(json.loads(buf.getvalue()), edges="edges")
    _check_graph(g, corpus, revisions=False)
    assert g.nodes[corpus["ctl"]]["text"] == CONTROL_TEXT  # JSON carries it as is
    assert (g.number_of_nodes(), g.number_of_edges()) == (report.nodes, report.edges)


@pytest.mark.req("API-4", "ENT-5")
def test_csv_nodes_and_edges_round_trip(
    service: Service, human: Binding, corpus: dict[str, Any], tmp_path: Path
) -> None:
    report = export(service, human, "csv", tmp_path / "out", revisions=True)
    with (tmp_path / "out" / "nodes.csv").open(encoding="utf-8", newline="") as fh:
        nodes = list(csv.DictReader(fh))
    with (tmp_path / "out" / "edges.csv").open(encoding="utf-8", newline="") as fh:
        edges = list(csv.DictReader(fh))
    assert (len(nodes), len(edges)) == (report.nodes, report.edges)
    assert list(nodes[0])[:4] == ["id:ID", ":LABEL", "kind", "label"]
    assert list(edges[0])[:3] == [":START_ID", ":END_ID", ":TYPE"]
    # Typed back the way neo4j-admin reads the headers, then the shared checks.
    g: nx.MultiDiGraph = nx.MultiDiGraph()

    def typed(row: dict[str, str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for col, value in row.items():
            name, _, typ = col.partition(":")
            if not name or name == "key" or value == "":
                continue
            if typ == "long":
                out[name] = int(value)
            elif typ == "boolean":
                out[name] = value == "true"
            else:
                out[name] = value
        return out

    for row in nodes:
        g.add_node(row["id:ID"], **typed(row))
    for row in edges:
        g.add_edge(row[":START_ID"], row[":END_ID"], key=row["key"], **typed(row))
    _check_graph(g, corpus, revisions=True)
    assert g.nodes[corpus["ctl"]]["text"] == CONTROL_TEXT
    labels = {r[":LABEL"] for r in nodes}
    assert labels == {"Atom", "Source", "Unavailable", "Revision", "Entity"}
    assert {r[":TYPE"] for r in edges} == {
        "LINK",
        "CITES",
        "DERIVES_FROM",
        "REVISION_OF",
        "MENTIONS",
    }


@pytest.mark.req("API-4")
def test_tampered_lineage_signature_is_reported_invalid(
    service: Service, human: Binding, corpus: dict[str, Any]
) -> None:
    cypher(
        service.db,
        "MATCH (c:Revision {subject: $s, atomId: $a})-[d:DERIVES_FROM]->() "
        "SET d.signature = '00' + substring(d.signature, 2)",
        s=human.subject,
        a=corpus["parts"][0],
    )
    buf = io.StringIO()
    report = export(service, human, "node-link", buf)
    assert report.signatures == {"verified": 2, "invalid": 1, "unknown_key": 0}
    g = nx.node_link_graph(json.loads(buf.getvalue()), edges="edges")
    bad = [d for u, _, d in g.edges(data=True) if u == corpus["parts"][0]]
    assert [d["signatureStatus"] for d in bad if d["kind"] == "derives_from"] == ["invalid"]


@pytest.mark.req("API-4", "LNK-6")
def test_export_is_refused_while_a_purge_is_pending(
    service: Service, human: Binding, corpus: dict[str, Any]
) -> None:
    cypher(service.db, "CREATE (:PurgeMarker {subject: $s})", s=human.subject)
    try:
        with pytest.raises(PurgePendingError):
            export(service, human, "graphml", io.StringIO())
    finally:
        cypher(service.db, "MATCH (p:PurgeMarker {subject: $s}) DELETE p", s=human.subject)


@pytest.mark.req("API-4")
def test_cli_export_streams_graphml_to_stdout(
    service: Service, human: Binding, corpus: dict[str, Any], tmp_path: Path
) -> None:
    from atomise_support import cli_env

    env = cli_env(service.settings, tmp_path)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphsvc",
            "export",
            "--subject",
            human.subject,
            "--format",
            "graphml",
            "-o",
            "-",
        ],
        env=env,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr.decode()
    assert b"export: page 1:" in out.stderr
    g = nx.read_graphml(io.BytesIO(out.stdout))
    _check_graph(g, corpus, revisions=False)


@pytest.mark.req("API-4")
def test_csv_is_read_by_neo4j_admin_database_import(
    service: Service, human: Binding, corpus: dict[str, Any], tmp_path: Path
) -> None:
    """The CSV pair goes through ``neo4j-admin database import full`` (the cached jars)."""
    import re
    import shutil

    from graphsvc.localdb import LocalNeo4j

    lib = LocalNeo4j(service.settings).lib_dir()
    java = shutil.which("java")
    if lib is None or java is None:
        pytest.skip("no cached Neo4j jars or java (GRAPHSVC_NEO4J_URI points elsewhere)")
    report = export(service, human, "csv", tmp_path / "csv", revisions=True)
    home = tmp_path / "neo4j-home"
    (home / "conf").mkdir(parents=True)
    (home / "conf" / "neo4j.conf").write_text("")
    out = subprocess.run(
        [
            java,
            "-Xmx512m",
            "-cp",
            f"{lib}/*",
            "org.neo4j.cli.AdminTool",
            "database",
            "import",
            "full",
            f"--nodes={tmp_path / 'csv' / 'nodes.csv'}",
            f"--relationships={tmp_path / 'csv' / 'edges.csv'}",
            "--multiline-fields=true",
            "--overwrite-destination=true",
            # Not the working directory (the repository when tests run).
            f"--report-file={tmp_path / 'import.report'}",
            "neo4j",
        ],
        env={"NEO4J_HOME": str(home), "NEO4J_CONF": str(home / "conf"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    imported = re.search(r"Imported:\s+(\d+) nodes\s+(\d+) relationships", out.stdout)
    assert imported, out.stdout[-2000:]
    assert (int(imported[1]), int(imported[2])) == (report.nodes, report.edges)
