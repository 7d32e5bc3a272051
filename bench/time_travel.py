"""Time travel latency (docs/time-travel.md): ``atom(asOf)`` and one-hop ``inspect(asOf)``
against the same calls without ``asOf``, over real HTTP, on a corpus built with the
project's bulk import (``graphsvc.bulk.bulk_import.import_file``).

The corpus: ``--atoms`` atoms, each linked (logical) to the one before it, then
``--revisions - 1`` rounds of revisions of every atom, each round one import file.
The instant asked for is the end of the middle round, so as-of heads are neither the
first nor the last revision. Each call is timed ``--calls`` times over a sample of
atoms (the baseline and the as-of call alternate, in the same process and server).
Prints p50/p95 in ms and the ratios, and writes JSON (``--out``)::

    python bench/time_travel.py --atoms 2000 --revisions 5 --out bench/results/time_travel.json
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import statistics
import sys
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness import BenchNeo4j
from graphsvc.bulk.bulk_import import import_file
from graphsvc.core.binding import Binding
from graphsvc.embed import get_embedder
from graphsvc.http.app import create_app
from graphsvc.keys.auth import AuthTable
from graphsvc.runtime import service_for
from graphsvc.tokenizer import get_tokenizer

ATOM = "query($id: ID!, $t: DateTime) { atom(atomId: $id, asOf: $t) { head { rev text } } }"
INSPECT = """query($id: ID!, $t: DateTime) {
  inspect(atomId: $id, limit: 10, asOf: $t) { atom { rev } neighbors { atom { atomId rev } } }
}"""
ATOMS = """query($after: String) {
  atoms(first: 100, after: $after) {
    edges { node { atomId head { rev } } } pageInfo { hasNextPage endCursor } }
}"""


def _serve(app: Any) -> tuple[str, uvicorn.Server, threading.Thread]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server, thread


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--atoms", type=int, default=2000)
    ap.add_argument("--revisions", type=int, default=5)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--out", default="bench/results/time_travel.json")
    args = ap.parse_args()

    neo = BenchNeo4j("time-travel", heap="1g", pagecache="512m")
    db = neo.database()
    db.apply_schema()
    service = service_for(neo.settings, db, get_embedder(), get_tokenizer())
    binding = Binding(f"bench-{uuid.uuid4().hex[:8]}", "default", "human", "bench")
    auth = AuthTable({})
    token = uuid.uuid4().hex
    auth.add(token, binding)
    url, server, thread = _serve(create_app(service, auth))
    client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60)

    def gql(query: str, **variables: Any) -> dict[str, Any]:
        body = client.post("/graphql", json={"query": query, "variables": variables}).json()
        assert "errors" not in body, body
        data: dict[str, Any] = body["data"]
        return data

    tmp = Path(tempfile.mkdtemp(prefix="graphsvc-tt-"))
    started = time.perf_counter()
    rows = []
    for i in range(args.atoms):
        links = [{"role": "follows", "target": {"local": f"a{i - 1}"}}] if i else []
        rows.append(
            {
                "id": f"a{i}",
                "text": f"Note {i} r1: shard {i % 97} status.",
                "links": links,
                "sources": [],
            }
        )
    import_file(service, binding, _jsonl(tmp / "r1.jsonl", rows), batch_size=args.batch)
    heads: dict[str, int] = {}
    after = None
    while True:
        page = gql(ATOMS, after=after)["atoms"]
        heads.update({e["node"]["atomId"]: e["node"]["head"]["rev"] for e in page["edges"]})
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    ids = sorted(heads)
    middle = None
    for rnd in range(2, args.revisions + 1):
        changes = [
            {
                "id": f"c{j}",
                "op": "revise",
                "target": {"atomId": aid, "rev": rnd - 1},
                "content": {"text": f"Note {j} r{rnd}: shard {j % 97} status.", "links": []},
                "sources": [],
            }
            for j, aid in enumerate(ids)
        ]
        import_file(service, binding, _jsonl(tmp / f"r{rnd}.jsonl", changes), batch_size=args.batch)
        if rnd == (args.revisions + 1) // 2:
            middle = datetime.now(UTC).isoformat()
    build_s = time.perf_counter() - started
    as_of = middle or datetime.now(UTC).isoformat()

    rng = random.Random(7)
    sample = [rng.choice(ids) for _ in range(args.calls)]
    timings: dict[str, list[float]] = {
        k: [] for k in ("atom", "atom_asof", "inspect", "inspect_asof")
    }
    for warm in sample[:20]:
        gql(ATOM, id=warm, t=as_of)
        gql(INSPECT, id=warm, t=None)
    for aid in sample:
        for name, query, t in (
            ("atom", ATOM, None),
            ("atom_asof", ATOM, as_of),
            ("inspect", INSPECT, None),
            ("inspect_asof", INSPECT, as_of),
        ):
            t0 = time.perf_counter()
            gql(query, id=aid, t=t)
            timings[name].append((time.perf_counter() - t0) * 1000)
    seen = gql(ATOM, id=sample[0], t=as_of)["atom"]["head"]["rev"]
    result: dict[str, Any] = {
        "atoms": len(ids),
        "revisionsPerAtom": args.revisions,
        "revisions": len(ids) * args.revisions,
        "calls": args.calls,
        "buildSeconds": round(build_s, 1),
        "asOfHeadRev": seen,
        "ms": {
            k: {"p50": round(statistics.median(v), 2), "p95": round(_pct(v, 0.95), 2)}
            for k, v in timings.items()
        },
    }
    ms = result["ms"]
    result["ratios"] = {
        "atom_p50": round(ms["atom_asof"]["p50"] / ms["atom"]["p50"], 2),
        "atom_p95": round(ms["atom_asof"]["p95"] / ms["atom"]["p95"], 2),
        "inspect_p50": round(ms["inspect_asof"]["p50"] / ms["inspect"]["p50"], 2),
        "inspect_p95": round(ms["inspect_asof"]["p95"] / ms["inspect"]["p95"], 2),
    }
    print(json.dumps(result, indent=2))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    client.close()
    server.should_exit = True
    thread.join(timeout=10)
    db.close()
    neo.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
