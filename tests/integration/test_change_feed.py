"""The change feed (docs/time-travel.md): ``changes`` over real HTTP on a real Neo4j.

Every write path records its operation once, in commit order: a write batch (create,
revise, retire), bulk import batches, an atomisation and a purge; pages of the
connection list each record exactly once, also while writers race; another subject's
operations never appear; a purge takes the purged atoms out of earlier records.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from atomise_support import THREE_SENTENCES, service_with
from write_support import frozen_clock, new, ref, retire, revise, write

from graphsvc.bulk.bulk_import import import_file
from graphsvc.core.binding import Binding
from graphsvc.core.instants import utc_z
from graphsvc.service import Service

UTC_Z = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")

CHANGES = """
query($first: Int, $after: String, $since: DateTime, $until: DateTime) {
  changes(first: $first, after: $after, since: $since, until: $until) {
    edges { cursor node {
      sequence operationId kind actor { kind id } committedAt purged redacted
      created { atomId rev } revised { atomId rev } retired { atomId rev }
      archived { atomId rev }
    } }
    pageInfo { hasNextPage endCursor }
  }
}
"""

WRITE = """
mutation($changes: [ChangeInput!]!) { write(changes: $changes) { operationId } }
"""


def _all(server: Any, token: str, first: int, **window: Any) -> list[dict[str, Any]]:
    """Every record, page by page (``first`` per page)."""
    out: list[dict[str, Any]] = []
    after = None
    while True:
        body = server.gql(CHANGES, {"first": first, "after": after, **window}, token=token)
        assert "errors" not in body, body
        conn = body["data"]["changes"]
        out += [e["node"] for e in conn["edges"]]
        assert len(conn["edges"]) <= first
        if not conn["pageInfo"]["hasNextPage"]:
            return out
        after = conn["pageInfo"]["endCursor"]


def _refs(node: dict[str, Any], key: str) -> list[tuple[str, int]]:
    return [(r["atomId"], r["rev"]) for r in node[key]]


@pytest.mark.req("API-6", "WR-4", "LNK-2")
def test_every_write_path_records_its_operation_once_in_order(
    service: Service, human: Binding, live_server: Any, tmp_path: Path
) -> None:
    first = write(service, human, [new("a", "Alpha."), new("b", "Beta.")])
    a, b = first.changes["a"], first.changes["b"]
    second = write(service, human, [revise("a", ref(a), "Alpha, revised.")])
    third = write(service, human, [retire("b", ref(b))])
    rows = [
        {"id": f"r{i}", "text": f"Imported row {i}.", "links": [], "sources": []} for i in range(3)
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    imported = import_file(service, human, path, batch_size=2)
    assert imported.committed_rows == 3
    rule = service_with(service, curator="rule")
    parent = write(rule, human, [new("p", THREE_SENTENCES)]).changes["p"]
    done = rule.atomise(human, parent.atom_id, max_atom_tokens=50)
    service.purge(human, a.atom_id)

    token = live_server.token_for(human)
    feed = _all(live_server, token, first=2)
    assert [n["sequence"] for n in feed] == list(range(1, 9))
    assert [n["kind"] for n in feed] == ["WRITE"] * 6 + ["ATOMISE", "PURGE"]
    assert feed[0]["operationId"] == first.operation_id
    assert feed[1]["operationId"] == second.operation_id
    assert feed[2]["operationId"] == third.operation_id
    assert all(n["actor"] == {"kind": "HUMAN", "id": "alice"} for n in feed)
    # The purge took `a` out of the records before it, and names nothing itself.
    assert _refs(feed[0], "created") == [(b.atom_id, 1)] and feed[0]["redacted"] == 1
    assert _refs(feed[1], "revised") == [] and feed[1]["redacted"] == 1
    assert _refs(feed[2], "retired") == [(b.atom_id, 2)] and feed[2]["redacted"] == 0
    assert [len(n["created"]) for n in feed[3:5]] == [2, 1]
    assert _refs(feed[5], "created") == [(parent.atom_id, 1)]
    atomised = feed[6]
    assert sorted(_refs(atomised, "created")) == sorted((x, 1) for x in done.atom_ids)
    assert _refs(atomised, "archived") == [(parent.atom_id, 2)]
    assert (feed[7]["purged"], feed[7]["created"], feed[7]["revised"]) == (1, [], [])
    times = [n["committedAt"] for n in feed]
    # One spelling of an instant on every surface: UTC, microseconds, Z (and string
    # order is time order).
    assert all(UTC_Z.fullmatch(t) for t in times), times
    assert times == sorted(times)
    # A window by time: records committed at or after the retire's time.
    since = _all(live_server, token, first=5, since=feed[2]["committedAt"])
    assert since[0]["sequence"] <= 3 and since[-1]["sequence"] == 8
    until = _all(live_server, token, first=5, until=feed[2]["committedAt"])
    assert all(n["sequence"] < 3 for n in until)
    text = json.dumps(feed)
    assert a.atom_id not in text


@pytest.mark.req("API-6", "API-2")
def test_racing_writers_over_http_each_appear_once_in_a_gap_free_order(
    service: Service, human: Binding, live_server: Any
) -> None:
    writers, per_writer = 4, 5
    tokens = [live_server.token_for(human) for _ in range(writers)]
    made: list[list[str]] = [[] for _ in range(writers)]
    barrier = threading.Barrier(writers)

    def run(i: int) -> None:
        barrier.wait()
        for j in range(per_writer):
            change = {
                "id": "x",
                "op": "CREATE",
                "content": {"text": f"w{i} n{j}", "links": []},
                "sources": [],
            }
            body = live_server.gql(WRITE, {"changes": [change]}, token=tokens[i])
            assert "errors" not in body, body
            made[i].append(body["data"]["write"]["operationId"])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(writers)]
    for t in threads:
        t.start()
    # Pages read while the writers run never repeat or reorder a record.
    seen_early = _all(live_server, tokens[0], first=3)
    for t in threads:
        t.join()
    assert all(len(m) == per_writer for m in made)
    feed = _all(live_server, tokens[0], first=3)
    ids = [n["operationId"] for n in feed]
    assert [n["sequence"] for n in feed] == list(range(1, writers * per_writer + 1))
    assert sorted(ids) == sorted(op for m in made for op in m)
    assert len(set(ids)) == len(ids)
    # Each writer's own operations appear in the order it made them.
    for m in made:
        assert [ids.index(op) for op in m] == sorted(ids.index(op) for op in m)
    # What was read early is a prefix of the final feed: numbers are given in commit
    # order and a page after a number never changes.
    assert [n["operationId"] for n in seen_early] == ids[: len(seen_early)]
    # Another subject's feed holds none of them.
    other = Binding(f"{human.subject}-other", "default", "human", "mallory")
    assert _all(live_server, live_server.token_for(other), first=10) == []


def _cli_env(service: Service, tmp: Path) -> dict[str, str]:
    s = service.settings
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHSVC_")}
    env.update(
        GRAPHSVC_NEO4J_URI=s.neo4j.uri,
        GRAPHSVC_NEO4J_USER=s.neo4j.user,
        GRAPHSVC_NEO4J_PASSWORD=s.neo4j.password,
        GRAPHSVC_NEO4J_DATABASE=s.neo4j.database,
        GRAPHSVC_STATE_DIR=str(tmp),
        GRAPHSVC_SECRET_FILE=s.paths.secret_file,
        PYTHONPATH=str(Path(__file__).resolve().parents[2]),
    )
    return env


def _export(service: Service, human: Binding, **window: Any) -> nx.DiGraph:
    buf = io.StringIO()
    service.export_graph(human, "node-link", buf, revisions=True, **window)
    graph: nx.DiGraph = nx.node_link_graph(json.loads(buf.getvalue()), edges="edges")
    return graph


@pytest.mark.req("API-4", "API-6")
def test_changes_cli_and_export_as_of_and_since(
    service: Service, human: Binding, tmp_path: Path
) -> None:
    with frozen_clock(service) as now:
        base = float(int(now[0]))
        now[0] = base + 10
        a = write(service, human, [new("a", "A one"), new("b", "B one")]).changes
        now[0] = base + 20
        write(service, human, [revise("a", ref(a["a"]), "A two")])
        now[0] = base + 30
        c = write(service, human, [new("c", "C one")]).changes["c"]
    at = [datetime.fromtimestamp(base + s, UTC).isoformat() for s in (15, 25, 35)]
    then = _export(service, human, as_of=at[0])
    atoms = {n: d for n, d in then.nodes(data=True) if d["kind"] == "atom"}
    assert set(atoms) == {a["a"].atom_id, a["b"].atom_id}
    assert (atoms[a["a"].atom_id]["rev"], atoms[a["a"].atom_id]["text"]) == (1, "A one")
    assert then.graph.get("asOf") == utc_z(at[0]) == at[0].replace("+00:00", ".000000Z")
    created = [d["createdAt"] for _, d in then.nodes(data=True) if d["kind"] == "atom"]
    assert created and all(UTC_Z.fullmatch(t) for t in created), created
    since = _export(service, human, since=at[0])
    changed = {n: d for n, d in since.nodes(data=True) if d["kind"] == "atom"}
    assert set(changed) == {a["a"].atom_id, c.atom_id}
    assert changed[a["a"].atom_id]["rev"] == 2
    window = _export(service, human, since=at[0], as_of=at[1])
    assert {n for n, d in window.nodes(data=True) if d["kind"] == "atom"} == {a["a"].atom_id}

    cmd = [sys.executable, "-m", "graphsvc", "changes", "--subject", human.subject]
    env = _cli_env(service, tmp_path)
    # Inputs take either spelling: an offset (--since) or Z (--until).
    done = subprocess.run(
        [*cmd, "--since", at[0], "--until", utc_z(at[2]), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)["changes"]
    assert [(x["kind"], x["revised"]) for x in listed] == [
        ("write", [{"atomId": a["a"].atom_id, "rev": 2}]),
        ("write", []),
    ]
    assert listed[1]["created"] == [{"atomId": c.atom_id, "rev": 1}]
    assert [x["committedAt"] for x in listed] == [
        datetime.fromtimestamp(base + s, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ") for s in (20, 30)
    ]
    plain = subprocess.run(
        [*cmd, "--since", at[1]], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert plain.returncode == 0 and c.atom_id in plain.stdout and "write" in plain.stdout
    assert utc_z(datetime.fromtimestamp(base + 30, UTC).isoformat()) in plain.stdout
