"""Benchmark: the vector leg for one subject among many, Neo4j 5.26 vs 2026.x in-index filtering.

Run::

    .venv/bin/python bench/filtered_vector.py [--subjects 1000] [--largest 20000]
        [--smallest 50] [--queries 40] [--versions 5.26.30,2026.08.1]
        [--java21 /usr/lib/jvm/temurin-25-jdk-amd64] [--json PATH]

graphsvc keeps every subject's vectors in one shared vector index. On Neo4j 5.26 a
subject's nearest neighbours come from the index's global top k filtered by subject
afterwards, widened once (k × 8), then an exact scan of the subject
(``store/retrieval.semantic_candidates``): a small subject among large ones rarely
holds any of the global top k, so it pays the widening and the scan. Neo4j 2026.x
(Cypher 25) can filter inside the index: a vector index declared ``WITH
[n.subject]`` answers ``MATCH (n) SEARCH n IN (VECTOR INDEX … FOR $q WHERE
n.subject = $s LIMIT 10)``. This benchmark loads the same seeded corpus into each
version in turn — ``--subjects`` subjects with Zipf sizes ``max(smallest, largest /
rank)``, unit vectors of 384 dimensions mixed from shared topic directions (see
``corpus``), the index configured as graphsvc's
(``cypher/schema/013_current_embedding.cypher``) — and times, for the largest, a
medium and the smallest subject, ``--queries`` queries (a stored vector of that
subject plus noise):

- ``postFilter``: graphsvc's leg on 5.26 (global top k = 48, filtered, widened, exact);
- ``exact``: the exact scan of the subject (the baseline, and the truth for recall);
- ``inIndex`` (2026.x only): the in-index filtered search.

Reported per version and subject: p50/p95 latency, recall@10 against the exact scan,
and how often the post-filter leg fell back to the scan. The nodes are the
benchmark's own (``:BenchVec {subject, id, embedding}``) so only the vector leg is
measured. Neo4j 2026.x needs Java 21+ (``--java21``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from neo4j import RoutingControl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphsvc.localdb import LocalNeo4j  # noqa: E402  (path set up just above)
from graphsvc.settings import Settings  # noqa: E402
from graphsvc.store.connection import Database  # noqa: E402

DIM = 384
K = 48  # graphsvc: max_seeds (24) × candidate_oversample (2)
LIMIT = 10
CHUNK = 5_000
INDEX_OPTIONS = (
    "OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}"
)
INDEX_526 = (
    f"CREATE VECTOR INDEX bench_vec IF NOT EXISTS FOR (n:BenchVec) ON (n.embedding) {INDEX_OPTIONS}"
)
INDEX_2026 = (
    "CYPHER 25 CREATE VECTOR INDEX bench_vec IF NOT EXISTS FOR (n:BenchVec) ON n.embedding "
    f"WITH [n.subject] {INDEX_OPTIONS}"
)
SUBJECT_INDEX = "CREATE INDEX bench_vec_subject IF NOT EXISTS FOR (n:BenchVec) ON (n.subject)"
LOAD = """
UNWIND $rows AS r
CREATE (:BenchVec {subject: r.subject, id: r.id, embedding: r.embedding})
"""
POST_FILTER = """
CALL db.index.vector.queryNodes('bench_vec', $k, $q) YIELD node, score
WHERE node.subject = $subject
RETURN node.id AS id, score ORDER BY score DESC LIMIT $limit
"""
EXACT = """
MATCH (n:BenchVec {subject: $subject})
WITH n, vector.similarity.cosine(n.embedding, $q) AS score
ORDER BY score DESC LIMIT $limit
RETURN n.id AS id, score
"""
IN_INDEX = """
CYPHER 25
MATCH (n:BenchVec)
  SEARCH n IN (VECTOR INDEX bench_vec FOR $q WHERE n.subject = $subject LIMIT $limit)
  SCORE AS score
RETURN n.id AS id, score ORDER BY score DESC
"""


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def corpus(args: argparse.Namespace) -> tuple[list[int], dict[int, np.ndarray]]:
    """Subject sizes by rank, and each subject's unit vectors (seeded).

    Vectors are mixtures of a few hundred shared "topic" directions plus noise, so
    neighbourhoods mean something (independent random vectors in 384 dimensions are
    all about equally far apart, and no index's top 10 is then well defined).
    """
    rng = np.random.default_rng(args.seed)
    topics = rng.normal(size=(512, DIM)).astype(np.float32)
    topics /= np.linalg.norm(topics, axis=1, keepdims=True)
    sizes = [max(args.smallest, args.largest // r) for r in range(1, args.subjects + 1)]
    vectors = {}
    for rank, n in enumerate(sizes, start=1):
        a = topics[rng.integers(len(topics), size=n)]
        b = topics[rng.integers(len(topics), size=n)]
        noise = rng.normal(scale=0.5 / np.sqrt(DIM), size=(n, DIM)).astype(np.float32)
        v = a + 0.6 * b + noise
        vectors[rank] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return sizes, vectors


def _q(db: Database, text: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = db.driver.execute_query(
        text, params, database_=db.database, routing_=RoutingControl.WRITE
    )
    return [r.data() for r in records]


def load(db: Database, sizes: list[int], vectors: dict[int, np.ndarray], v2026: bool) -> float:
    t0 = time.perf_counter()
    _q(db, INDEX_2026 if v2026 else INDEX_526)
    _q(db, SUBJECT_INDEX)
    batch: list[dict[str, Any]] = []
    done = 0
    for rank in range(1, len(sizes) + 1):
        for i, vec in enumerate(vectors[rank]):
            batch.append({"subject": f"s{rank}", "id": f"s{rank}-{i}", "embedding": vec.tolist()})
            if len(batch) == CHUNK:
                _q(db, LOAD, rows=batch)
                done += len(batch)
                batch = []
                print(f"  loaded {done}/{sum(sizes)}", file=sys.stderr, flush=True)
    if batch:
        _q(db, LOAD, rows=batch)
    _q(db, "CALL db.awaitIndexes(3600)")
    return time.perf_counter() - t0


def post_filter(db: Database, subject: str, q: list[float]) -> tuple[list[str], str]:
    """graphsvc's vector leg on 5.26 (store/retrieval.semantic_candidates)."""
    for widen in (1, 8):
        rows = _q(db, POST_FILTER, k=K * widen, q=q, subject=subject, limit=LIMIT)
        if len(rows) >= LIMIT:
            return [r["id"] for r in rows], "index" if widen == 1 else "widened"
    return [r["id"] for r in _q(db, EXACT, q=q, subject=subject, limit=LIMIT)], "exact"


def measure(
    db: Database,
    sizes: list[int],
    vectors: dict[int, np.ndarray],
    queries: int,
    seed: int,
    v2026: bool,
) -> dict[str, Any]:
    rng = np.random.default_rng(seed + 1)
    picks = {"largest": 1, "medium": (len(sizes) + 1) // 2, "smallest": len(sizes)}
    out: dict[str, Any] = {}
    for label, rank in picks.items():
        subject = f"s{rank}"
        times: dict[str, list[float]] = {"postFilter": [], "exact": [], "inIndex": []}
        recall: dict[str, list[float]] = {"postFilter": [], "inIndex": []}
        modes: dict[str, int] = {}
        for _ in range(queries):
            base = vectors[rank][rng.integers(len(vectors[rank]))]
            q = base + rng.normal(scale=0.2 / np.sqrt(DIM), size=DIM)
            qv = (q / np.linalg.norm(q)).tolist()
            t0 = time.perf_counter()
            truth = {r["id"] for r in _q(db, EXACT, q=qv, subject=subject, limit=LIMIT)}
            times["exact"].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            got, mode = post_filter(db, subject, qv)
            times["postFilter"].append((time.perf_counter() - t0) * 1000)
            modes[mode] = modes.get(mode, 0) + 1
            recall["postFilter"].append(len(truth & set(got)) / len(truth))
            if v2026:
                t0 = time.perf_counter()
                rows = _q(db, IN_INDEX, q=qv, subject=subject, limit=LIMIT)
                times["inIndex"].append((time.perf_counter() - t0) * 1000)
                recall["inIndex"].append(len(truth & {r["id"] for r in rows}) / len(truth))
        entry: dict[str, Any] = {"subject": subject, "vectors": sizes[rank - 1]}
        for leg, t in times.items():
            if not t:
                continue
            entry[leg] = {
                "p50Ms": round(statistics.median(t), 1),
                "p95Ms": round(pct(t, 0.95), 1),
            }
            if leg in recall:
                entry[leg]["recallAt10"] = round(statistics.fmean(recall[leg]), 3)
        entry["postFilter"]["modes"] = modes
        out[label] = entry
    return out


def run_version(
    version: str, args: argparse.Namespace, sizes: list[int], vectors: dict[int, np.ndarray]
) -> dict[str, Any]:
    v2026 = not version.startswith("5.")
    tmp = tempfile.TemporaryDirectory(prefix=f"graphsvc-bench-fv-{version}-")
    settings = Settings.from_env(state_dir=Path(tmp.name)).with_(
        neo4j_version_range=f"[{version}]", neo4j_heap="2g", neo4j_pagecache="2g"
    )
    saved = os.environ.get("JAVA_HOME")
    if v2026:
        os.environ["JAVA_HOME"] = args.java21
        if hasattr(settings, "java_home"):
            settings = settings.with_(java_home=args.java21)
    local = LocalNeo4j(settings, name="bench-fv", port=0, auth=False)
    try:
        inst = local.start(die_with_parent=True)
    finally:
        if saved is None:
            os.environ.pop("JAVA_HOME", None)
        else:
            os.environ["JAVA_HOME"] = saved
    db = Database(inst.uri, "", "", settings.neo4j.database)
    try:
        server = db.server_info()
        print(f"{server['version']}: loading {sum(sizes)} vectors...", file=sys.stderr, flush=True)
        load_s = load(db, sizes, vectors, v2026)
        # Warm the plans and the page cache, untimed.
        measure(db, sizes, vectors, 5, args.seed + 99, v2026)
        return {
            "neo4j": server["version"],
            "loadSeconds": round(load_s, 1),
            "subjects": measure(db, sizes, vectors, args.queries, args.seed, v2026),
            "loadAverage": [round(x, 2) for x in os.getloadavg()],
        }
    finally:
        db.close()
        local.stop()
        tmp.cleanup()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--subjects", type=int, default=1000)
    p.add_argument("--largest", type=int, default=20_000)
    p.add_argument("--smallest", type=int, default=50)
    p.add_argument("--queries", type=int, default=40)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--versions", default="5.26.30,2026.08.1")
    p.add_argument("--java21", default="/usr/lib/jvm/temurin-25-jdk-amd64")
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "filtered_vector.json"))
    args = p.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sizes, vectors = corpus(args)
    results = {}
    for version in args.versions.split(","):
        results[version] = run_version(version.strip(), args, sizes, vectors)
        for label, entry in results[version]["subjects"].items():
            legs = "  ".join(
                f"{leg} p50 {entry[leg]['p50Ms']:.1f} / p95 {entry[leg]['p95Ms']:.1f} ms"
                + (f" R@10 {entry[leg]['recallAt10']:.2f}" if "recallAt10" in entry[leg] else "")
                for leg in ("postFilter", "inIndex", "exact")
                if leg in entry
            )
            print(f"{version:>10} {label:>8} ({entry['vectors']:>6} vectors): {legs}", flush=True)
    report = {
        "benchmark": "vector leg of one subject among many: post-filter vs in-index filter",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "settings": {
            "subjects": args.subjects,
            "largest": args.largest,
            "smallest": args.smallest,
            "totalVectors": sum(sizes),
            "queries": args.queries,
            "k": K,
        },
        "versions": results,
        "baseline": "exact scan of the subject (same run, same Neo4j)",
    }
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
