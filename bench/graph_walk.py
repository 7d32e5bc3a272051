"""Benchmark: the typed graph's three-level walk, batched (DataLoaders) vs per field.

Run::

    .venv/bin/python bench/graph_walk.py [--atoms 10000] [--page 100] [--runs 50]
                                         [--warmup 40] [--gc both|frozen|default]
                                         [--block 10] [--json PATH]

The corpus: ``--atoms`` atoms in one subject, each with one revision, two links
(one observed to another atom's revision, one logical to another atom) and one
citation of one of 100 shared sources; bulk-loaded with ``UNWIND`` straight
through the driver into the data model the write path creates (writing 10k atoms
through ``service.write`` would time the writes, not the walk).

The query (the issue's "100 atoms three levels deep")::

    atoms(first: 100, after: <random cursor>) { edges { node { atomId head { rev
      links { edges { node { role target {
        ... on Revision { text citations { verified source { uri } } }
        ... on Atom { head { text citations { source { uri } } } } } } } } } } } }

**Typed graph**: the query through the real strawberry schema (in process, real
Context and API token, the served extensions including the cost limit), fields
loading through the request's DataLoaders. **Baseline, same run**: the same
data fetched the way a resolver without batching fetches it, one round trip per
field: the atoms page, then for every atom its links, for every link its target
(revision or atom), for every target its citations — the same named queries of
``cypher/graph/`` with one key each, called directly (no GraphQL overhead, which
favours the baseline). Both answers are checked to hold the same targets and
citations. Prints p50/p95 of each, the ratio baseline/typed and the round trips
per walk, and writes ``bench/results/graph_walk.json``.

**The collector** (``--gc``): ``frozen`` is what ``graphsvc serve`` applies when it
starts (graphsvc/http/gc_policy.py: the startup heap, the embedding model included,
frozen out of collections; larger thresholds); ``default`` is CPython's collector.
``both`` (the default) is an A/B in this one process (random cursors, fresh for
each walk): ``--runs`` walks under CPython's collector as the process started, then
``--runs`` under the serve policy (or alternating blocks of ``--block`` walks,
switched untimed between walks: ``gc.unfreeze()`` and a full collection for
``default``), with each walk's collector pauses read from ``gc.callbacks``. The
walks run on one event loop with the served default executor (``worker_threads``
threads), as in ``graphsvc serve``.

Neo4j is the managed one (started for the run, stopped at the end) unless
``GRAPHSVC_NEO4J_URI`` points at a server.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import random
import signal
import statistics
import sys
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from neo4j import RoutingControl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import BenchNeo4j  # noqa: E402
from graphsvc.api.context import Context  # noqa: E402  (path set up just above)
from graphsvc.api.graph_ids import encode_cursor  # noqa: E402
from graphsvc.api.schema import build_schema  # noqa: E402
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.core.citations import source_key, text_digest  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.http.gc_policy import FROZEN_THRESHOLDS, apply_gc_policy  # noqa: E402
from graphsvc.keys.auth import AuthTable  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.service import Service  # noqa: E402
from graphsvc.store import graph as store  # noqa: E402
from graphsvc.store.connection import Database, round_trips  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

CHUNK = 5_000
# CPython's thresholds, as this process started (nothing has changed them yet).
DEFAULT_THRESHOLDS = gc.get_threshold()
SOURCES = 100

CREATE_ATOMS = """
UNWIND $rows AS r
CREATE (a:Atom {subject: $subject, atomId: r.atomId, headRev: 1, state: 'active',
                createdAt: $now})
CREATE (v:Revision:Current {subject: $subject, atomId: r.atomId, rev: 1, text: r.text,
                            state: 'active', digest: r.digest, tokens: r.tokens,
                            sources: '[]', createdAt: $now, actorKind: 'human',
                            actorId: 'bench', policy: 'default', operationId: $op})
CREATE (a)-[:HAS_REVISION]->(v)
CREATE (a)-[:HEAD]->(v)
"""
CREATE_LINKS = """
UNWIND $rows AS r
MATCH (s:Revision {subject: $subject, atomId: r.src, rev: 1})
MATCH (o:Revision {subject: $subject, atomId: r.observed, rev: 1})
MATCH (l:Atom {subject: $subject, atomId: r.logical})
CREATE (s)-[:LINK {role: 'see', at: 'observed', required: false, ordinal: 0}]->(o)
CREATE (s)-[:LINK {role: 'part-of', at: 'logical', required: false, ordinal: 1,
                   boundRev: 1}]->(l)
"""
CREATE_CITES = """
UNWIND $rows AS r
MATCH (s:Revision {subject: $subject, atomId: r.src, rev: 1})
MERGE (src:Source {subject: $subject, sourceKey: r.sourceKey})
  ON CREATE SET src.uri = r.uri, src.version = null, src.digest = null
CREATE (s)-[:CITES {ordinal: 0, start: 0, end: 10, unit: 'byte', verified: false}]->(src)
"""

WALK = """query($first: Int, $after: String) {
  atoms(first: $first, after: $after) { edges { node { atomId head { rev
    links { edges { node { role target {
      ... on Revision { atomId rev text citations { verified source { uri } } }
      ... on Atom { atomId head { text citations { source { uri } } } }
    } } } } } } } }
}"""


def _write(db: Database, text: str, **params: Any) -> None:
    db.driver.execute_query(text, params, database_=db.database, routing_=RoutingControl.WRITE)


def load(service: Service, subject: str, n: int, seed: int) -> tuple[list[str], float]:
    """Bulk-load the corpus; returns the sorted atom ids and the seconds it took."""
    t0 = time.perf_counter()
    rng = random.Random(seed)
    ids = [uuid.UUID(int=rng.getrandbits(128)).hex for _ in range(n)]
    now = datetime.now(UTC).isoformat()
    op = uuid.uuid4().hex
    texts = [f"Walk note {i}: {rng.choice(('north', 'south', 'east', 'west'))}." for i in range(n)]
    for start in range(0, n, CHUNK):
        rows = [
            {
                "atomId": ids[i],
                "text": texts[i],
                "digest": text_digest(texts[i]),
                "tokens": service.tokenizer.count(texts[i]),
            }
            for i in range(start, min(start + CHUNK, n))
        ]
        _write(service.db, CREATE_ATOMS, rows=rows, subject=subject, now=now, op=op)
    links = [
        {"src": ids[i], "observed": ids[(i + 1) % n], "logical": ids[(i + 7) % n]} for i in range(n)
    ]
    cites = []
    for i in range(n):
        uri = f"https://example.org/source/{i % SOURCES}"
        cites.append({"src": ids[i], "uri": uri, "sourceKey": source_key(uri, None, None)})
    for start in range(0, n, CHUNK):
        _write(service.db, CREATE_LINKS, rows=links[start : start + CHUNK], subject=subject)
        _write(service.db, CREATE_CITES, rows=cites[start : start + CHUNK], subject=subject)
    return sorted(ids), time.perf_counter() - t0


def typed_walk(
    loop: asyncio.AbstractEventLoop,
    service: Service,
    schema: Any,
    auth: AuthTable,
    token: str,
    after: str,
    page: int,
) -> Any:
    ctx = Context(service=service, auth=auth, authorization=f"Bearer {token}")
    result = loop.run_until_complete(
        schema.execute(WALK, variable_values={"first": page, "after": after}, context_value=ctx)
    )
    if result.errors:
        raise RuntimeError(result.errors)
    return result.data


def per_field_walk(db: Database, subject: str, after_id: str, page: int) -> list[Any]:
    """The same data, one round trip per field (no batching)."""
    out = []
    atoms = store.atoms_page(db, subject, after=after_id, state=None, text=None, limit=page + 1)
    for a in atoms[:page]:
        head = a["head"]
        key = {
            "key": "0",
            "atomId": head["atomId"],
            "rev": head["rev"],
            "role": None,
            "after": None,
            "limit": 21,
        }
        links = store.link_pages(db, subject, [key]).get("0", [])
        targets = []
        for link in links[:20]:
            if link["rev"] is not None:
                ref = (link["atomId"], int(link["rev"]))
                rev = store.revisions(db, subject, [ref])[ref]
            else:
                rev = store.atoms(db, subject, [link["atomId"]])[link["atomId"]]["head"]
                ref = (rev["atomId"], int(rev["rev"]))
            cites = store.citations(db, subject, [ref])[ref]
            targets.append((rev["text"], sorted(c["uri"] for c in cites)))
        out.append((a["atomId"], targets))
    return out


def typed_as_rows(data: Any) -> list[Any]:
    out = []
    for edge in data["atoms"]["edges"]:
        node = edge["node"]
        targets = []
        for link in node["head"]["links"]["edges"]:
            t = link["node"]["target"]
            rev = t if "citations" in t else t["head"]
            targets.append((rev["text"], sorted(c["source"]["uri"] for c in rev["citations"])))
        out.append((node["atomId"], targets))
    return out


def pct(values: Sequence[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


class GcPauses:
    """Collector pauses seen through ``gc.callbacks`` (all generations, this process)."""

    def __init__(self) -> None:
        self.started = 0
        self.pauses: list[tuple[int, float]] = []
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self.started = time.perf_counter_ns()
        else:
            ms = (time.perf_counter_ns() - self.started) / 1e6
            self.pauses.append((int(info["generation"]), ms))

    def take(self) -> list[tuple[int, float]]:
        out, self.pauses = self.pauses, []
        return out


def set_gc(arm: str) -> None:
    """Put the collector into ``arm``'s state (untimed, between walks).

    ``frozen`` is what ``graphsvc serve`` does when it starts
    (:func:`graphsvc.http.gc_policy.apply_gc_policy`); ``default`` is CPython's
    collector as the process started, or, after a frozen block, with the startup
    heap back in its oldest generation just after a full collection.
    """
    if arm == "frozen":
        apply_gc_policy("frozen")
    elif gc.get_freeze_count():
        gc.unfreeze()
        gc.set_threshold(*DEFAULT_THRESHOLDS)
        gc.collect()


def summary(ms: list[float], trips: list[int]) -> dict[str, Any]:
    return {
        "p50Ms": round(statistics.median(ms), 2),
        "p95Ms": round(pct(ms, 0.95), 2),
        "maxMs": round(max(ms), 2),
        "roundTrips": max(trips),
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--atoms", type=int, default=10_000)
    p.add_argument("--page", type=int, default=100)
    p.add_argument("--runs", type=int, default=50, help="walks per collector arm")
    p.add_argument("--warmup", type=int, default=40)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument(
        "--gc",
        choices=("frozen", "default", "both"),
        default="both",
        help="collector of the walks: graphsvc serve's policy (frozen), CPython's "
        "(default), or both in alternating blocks of --block walks (paired A/B)",
    )
    p.add_argument(
        "--block",
        type=int,
        default=0,
        help="with --gc both: walks per block, the arms alternating (0: one block per "
        "arm, default first). Short blocks favour default: each switch to it ends in a "
        "full collection, which a real process would pay for within the walks",
    )
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "graph_walk.json"))
    args = p.parse_args(argv)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    neo = BenchNeo4j("walk")
    settings = neo.settings
    db = neo.database()
    # One event loop for the whole run with the served default executor, as in
    # `graphsvc serve` (a loop per walk would time thread start-ups, not the walk).
    loop = asyncio.new_event_loop()
    pool = ThreadPoolExecutor(settings.http.worker_threads, thread_name_prefix="bench-worker")
    loop.set_default_executor(pool)
    try:
        db.apply_schema()
        service = service_for(settings, db, get_embedder(), get_tokenizer())
        subject = f"bench-walk-{uuid.uuid4().hex[:8]}"
        ids, load_s = load(service, subject, args.atoms, args.seed)
        print(f"loaded {args.atoms} atoms in {load_s:.1f} s", file=sys.stderr)
        binding = Binding(subject, "default", "human", "bench")
        auth = AuthTable({})
        token = uuid.uuid4().hex
        auth.add(token, binding)
        schema = build_schema(settings)
        arms = ["default", "frozen"] if args.gc == "both" else [args.gc]
        rng = random.Random(args.seed + 1)
        # Pages start at random atoms that leave a full page after them.
        total = args.runs * len(arms)
        starts = [ids[rng.randrange(0, len(ids) - args.page - 1)] for _ in range(total)]
        for i in range(args.warmup):
            start = ids[rng.randrange(0, len(ids) - args.page - 1)]
            cursor = encode_cursor("atoms", start)
            typed_walk(loop, service, schema, auth, token, cursor, args.page)
            if i < args.warmup // 4:
                per_field_walk(db, subject, start, args.page)
        pauses = GcPauses()
        res = {
            arm: {
                "typed": [],
                "typedCpu": [],
                "base": [],
                "typedTrips": [],
                "baseTrips": [],
                "gc": [],
            }
            for arm in arms
        }
        loads: list[float] = []
        current = None
        for n, start in enumerate(starts):
            block = args.block or args.runs
            arm = arms[(n // block) % len(arms)]
            if arm != current:
                set_gc(arm)
                current = arm
                loads.append(os.getloadavg()[0])
            r: dict[str, list[Any]] = res[arm]
            # Alternate which path goes first, so neither always runs on a warmer cache.
            order = ("typed", "base") if n % 2 == 0 else ("base", "typed")
            answers: dict[str, Any] = {}
            for which in order:
                trips = round_trips()
                pauses.take()
                t0 = time.perf_counter()
                c0 = time.process_time()
                if which == "typed":
                    cursor = encode_cursor("atoms", start)
                    data = typed_walk(loop, service, schema, auth, token, cursor, args.page)
                    r["typed"].append((time.perf_counter() - t0) * 1000)
                    r["typedCpu"].append((time.process_time() - c0) * 1000)
                    r["typedTrips"].append(round_trips() - trips)
                    r["gc"].append(pauses.take())
                    answers["typed"] = typed_as_rows(data)
                else:
                    answers["base"] = per_field_walk(db, subject, start, args.page)
                    r["base"].append((time.perf_counter() - t0) * 1000)
                    r["baseTrips"].append(round_trips() - trips)
            if answers["typed"] != answers["base"]:
                raise RuntimeError("the typed walk and the per-field walk disagree")
        gc.callbacks.remove(pauses._callback)
        report: dict[str, Any] = {
            "benchmark": "graph_walk",
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": {
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "loadavg": os.getloadavg(),
                "loadavg1DuringRuns": [min(loads), max(loads)],
            },
            "atoms": args.atoms,
            "page": args.page,
            "runs": args.runs,
            "warmup": args.warmup,
            "gc": args.gc,
            "block": args.block,
            "frozenThresholds": list(FROZEN_THRESHOLDS),
            "linksPerAtom": 2,
            "loadSeconds": round(load_s, 2),
            "arms": {},
        }
        lines = []
        for arm in arms:
            r = res[arm]
            walk_gc = [sum(ms for _, ms in w) for w in r["gc"]]
            typed = summary(r["typed"], r["typedTrips"])
            # CPU of this process (all its threads, the driver's included; not Neo4j's)
            # per walk: less sensitive to other work on the machine than the wall time.
            typed["cpuMsP50"] = round(statistics.median(r["typedCpu"]), 2)
            typed["gcMsPerWalkP50"] = round(statistics.median(walk_gc), 2)
            typed["gcMsPerWalkMax"] = round(max(walk_gc), 2)
            typed["fullCollectionsPerWalk"] = round(
                sum(1 for w in r["gc"] for g, _ in w if g == 2) / len(r["gc"]), 3
            )
            typed["longestPauseMs"] = round(max((ms for w in r["gc"] for _, ms in w), default=0), 2)
            base = summary(r["base"], r["baseTrips"])
            report["arms"][arm] = {
                "typed": typed,
                "perFieldBaseline": base,
                "ratioP50": round(base["p50Ms"] / typed["p50Ms"], 2),
                "ratioP95": round(base["p95Ms"] / typed["p95Ms"], 2),
            }
            lines.append(
                f"gc {arm}: typed graph p50 {typed['p50Ms']} ms p95 {typed['p95Ms']} ms "
                f"({typed['roundTrips']} round trips; cpu {typed['cpuMsP50']} ms/walk p50; "
                f"gc {typed['gcMsPerWalkP50']} ms/walk "
                f"p50, longest pause {typed['longestPauseMs']} ms, "
                f"{typed['fullCollectionsPerWalk']} full collections/walk); per-field "
                f"baseline p50 {base['p50Ms']} ms p95 {base['p95Ms']} ms "
                f"({base['roundTrips']} round trips); baseline/typed p50 "
                f"×{report['arms'][arm]['ratioP50']}, p95 ×{report['arms'][arm]['ratioP95']}"
            )
        served = "frozen" if "frozen" in arms else arms[0]
        # The top-level figures are those of the collector `graphsvc serve` runs with.
        report["typed"] = report["arms"][served]["typed"]
        report["perFieldBaseline"] = report["arms"][served]["perFieldBaseline"]
        if len(arms) == 2:
            d, f = report["arms"]["default"]["typed"], report["arms"]["frozen"]["typed"]
            report["frozenVsDefault"] = {
                "p50": round(f["p50Ms"] / d["p50Ms"], 2),
                "p95": round(f["p95Ms"] / d["p95Ms"], 2),
            }
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2) + "\n")
        print(
            f"{args.atoms} atoms, page {args.page}, {args.runs} runs per arm, load "
            f"{min(loads):.2f}–{max(loads):.2f}"
        )
        for line in lines:
            print(line)
        if "frozenVsDefault" in report:
            v = report["frozenVsDefault"]
            print(f"frozen/default: p50 ×{v['p50']}, p95 ×{v['p95']}")
        print(f"wrote {out}")
    finally:
        loop.close()
        pool.shutdown(wait=False, cancel_futures=True)
        db.close()
        neo.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
