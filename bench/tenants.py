"""Benchmark: many subjects of Zipf-distributed sizes sharing one database, on one Neo4j line.

Run::

    .venv/bin/python bench/tenants.py [--subjects 1000] [--largest 20000] [--smallest 100]
        [--neo4j 5.26.30 | --neo4j 2026.08.1 --java21 /usr/lib/jvm/temurin-25-jdk-amd64]
        [--queries 30] [--random-vectors] [--json bench/results/tenants-<line>.json]

Subject *r* (rank 1..``--subjects``) gets ``max(smallest, largest / r)`` atoms (Zipf,
s = 1) of seeded sentences (``bench/ingest.texts``), loaded with ``graphsvc import``'s
code (:func:`graphsvc.bulk.bulk_import.import_file`) with their real embeddings
(all-MiniLM-L6-v2, computed once and cached under ``~/.cache/graphsvc/bench``, so the
two Neo4j lines load the same vectors; ``--random-vectors``: seeded random unit
vectors instead). ``--neo4j`` picks the managed Neo4j's release (the launcher's
``GRAPHSVC_NEO4J_VERSION_RANGE``; 2026.x needs a Java 21+ ``--java21``); on 2026.x
graphsvc declares the vector index with the subject as a filter property and its
vector leg searches inside the index (docs/performance.md).

For the largest subject, the largest one at or below ``GRAPHSVC_VECTOR_EXACT_MAX``
(``exactMax``: where the small-subject exact scan stops), a medium one (the median
rank) and the smallest, ``--queries`` text queries taken from that subject's own texts
go through the service in this process (:func:`graphsvc.runtime.service_for`):

- ``search`` (limit 10, default depth) and ``read`` (the default budget), p50/p95,
  and which path answered the vector leg (``diagnostics.acquisition.vectorMode``);
- the vector leg alone (:func:`graphsvc.store.retrieval.semantic_candidates`, top 10
  of k = max_seeds × oversample) for the query's real embedding, as the service runs
  it (small subjects scanned exactly first) and without the small-subject scan
  (``exact_max = 0``: the index leg of this Neo4j line alone), each with its p50/p95,
  the modes that answered and its recall@10 against the exact scan of the subject
  (the baseline, timed in the same run).

The load average (``uptime``) is recorded with each subject: on a shared machine the
absolute times move with it; the ratios within one run are what to read.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import BenchNeo4j, rss_mb  # noqa: E402
from bench.ingest import rows, texts  # noqa: E402  (path set up just above)
from graphsvc.bulk.bulk_import import import_file  # noqa: E402
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.core.requests import ReadRequest, SearchRequest  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.store.indexes import vector_filtered  # noqa: E402
from graphsvc.store.meta import server_info  # noqa: E402
from graphsvc.store.retrieval import semantic_candidates  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

JAVA21 = "/usr/lib/jvm/temurin-25-jdk-amd64"
LIMIT = 10


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summary(times: Sequence[float]) -> dict[str, float]:
    return {"p50Ms": round(statistics.median(times), 1), "p95Ms": round(pct(times, 0.95), 1)}


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


class Lookup:
    """The real embedder, answering the corpus's texts from vectors computed beforehand.

    One float32 matrix and a text → row map (200k lists of 384 floats would take ~2.5 GB
    and be walked by every full garbage collection); any other text (a query) goes to
    the real model.
    """

    def __init__(self, base: Any, corpus: Sequence[str], matrix: np.ndarray) -> None:
        self.model_name = base.model_name
        self.dimension = base.dimension
        self._base = base
        self._row = {text: i for i, text in enumerate(corpus)}
        self._matrix = matrix

    def embed(self, batch: Sequence[str]) -> list[list[float]]:
        missing = [t for t in batch if t not in self._row]
        computed = dict(zip(missing, self._base.embed(missing), strict=True)) if missing else {}
        return [
            computed[t] if t in computed else self._matrix[self._row[t]].astype(float).tolist()
            for t in batch
        ]


def corpus_texts(sizes: Sequence[int], seed: int) -> list[list[str]]:
    return [
        [f"[s{rank}] {t}" for t in texts(n, seed + rank)] for rank, n in enumerate(sizes, start=1)
    ]


def vectors(
    all_texts: Sequence[str], embedder: Any, args: argparse.Namespace, key: str
) -> np.ndarray:
    """The corpus's embeddings: real ones (cached per corpus) or seeded random ones."""
    if args.random_vectors:
        rng = np.random.default_rng(args.seed)
        m = rng.normal(size=(len(all_texts), embedder.dimension)).astype(np.float32)
        return m / np.linalg.norm(m, axis=1, keepdims=True)
    cache = Path(args.cache) / f"tenants-{key}.npy"
    if cache.exists():
        print(f"embeddings from {cache}", file=sys.stderr, flush=True)
        return np.load(cache)
    out = np.empty((len(all_texts), embedder.dimension), dtype=np.float32)
    t0 = time.perf_counter()
    step = 2048
    for i in range(0, len(all_texts), step):
        out[i : i + step] = np.asarray(embedder.embed(all_texts[i : i + step]), dtype=np.float32)
        done = min(i + step, len(all_texts))
        rate = done / (time.perf_counter() - t0)
        print(f"  embedded {done}/{len(all_texts)} ({rate:.0f}/s)", file=sys.stderr, flush=True)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.save(cache, out)
    return out


def query_text(text: str) -> str:
    """A query from one of the subject's texts: its sentence without the entry number."""
    head = text.split(" according to ", 1)[0]
    return head.split("] ", 1)[-1]


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1000, out


def measure_subject(
    service: Any,
    settings: Any,
    subject: str,
    own: Sequence[str],
    queries: int,
    rng: np.random.Generator,
) -> dict[str, Any]:
    db = service.db
    embedder = service.embedder
    binding = Binding(subject, "default", "human", "bench")
    k = settings.ranking.max_seeds * settings.ranking.candidate_oversample
    picked = [query_text(own[int(i)]) for i in rng.integers(len(own), size=queries + 3)]
    warm, picked = picked[:3], picked[3:]
    for q in warm:  # plans and page cache, untimed
        service.search(binding, SearchRequest(q, limit=LIMIT))
        service.read(binding, ReadRequest(q, settings.read.read_budget))
    search_t: list[float] = []
    read_t: list[float] = []
    search_modes: dict[str, int] = {}
    legs: dict[str, dict[str, Any]] = {
        "service": {
            "t": [],
            "recall": [],
            "modes": {},
            "exactMax": settings.ranking.vector_exact_max,
        },
        "indexOnly": {"t": [], "recall": [], "modes": {}, "exactMax": 0},
    }
    exact_t: list[float] = []
    for q in picked:
        ms, result = timed(lambda q=q: service.search(binding, SearchRequest(q, limit=LIMIT)))
        search_t.append(ms)
        mode = result.diagnostics.get("acquisition", {}).get("vectorMode", "?")
        search_modes[mode] = search_modes.get(mode, 0) + 1
        ms, _ = timed(lambda q=q: service.read(binding, ReadRequest(q, settings.read.read_budget)))
        read_t.append(ms)
        qv = embedder.embed([q])[0]
        ms, truth = timed(
            lambda qv=qv: db.read_rows(
                "search/vector_candidates_exact",
                embedding=qv,
                subject=subject,
                includeArchived=False,
                limit=LIMIT,
            )
        )
        exact_t.append(ms)
        want = {r["atomId"] for r in truth}
        for leg in legs.values():
            ms, hits = timed(
                lambda qv=qv, leg=leg: semantic_candidates(
                    db,
                    subject=subject,
                    vector=qv,
                    k=k,
                    limit=LIMIT,
                    include_archived=False,
                    exact_max=leg["exactMax"],
                )
            )
            leg["t"].append(ms)
            leg["modes"][hits.mode] = leg["modes"].get(hits.mode, 0) + 1
            leg["recall"].append(len(want & {r["atomId"] for r in hits.rows}) / max(1, len(want)))
    return {
        "subject": subject,
        "atoms": len(own),
        "search": {**summary(search_t), "vectorModes": search_modes},
        "read": {**summary(read_t), "budget": settings.read.read_budget},
        "vectorLeg": {
            name: {
                **summary(leg["t"]),
                "exactMax": leg["exactMax"],
                "modes": leg["modes"],
                "recallAt10": round(statistics.fmean(leg["recall"]), 3),
            }
            for name, leg in legs.items()
        },
        "exactScan": summary(exact_t),
        "loadAverage": load(),
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--subjects", type=int, default=1000)
    p.add_argument("--largest", type=int, default=20_000)
    p.add_argument("--smallest", type=int, default=100)
    p.add_argument("--queries", type=int, default=30)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--neo4j", default="5.26.30", help="Neo4j release: 5.26.30 or 2026.08.1")
    p.add_argument("--java21", default=JAVA21, help="a Java 21+ JDK for Neo4j 2026.x")
    p.add_argument("--random-vectors", action="store_true", help="seeded random embeddings")
    p.add_argument("--cache", default=str(Path.home() / ".cache" / "graphsvc" / "bench"))
    p.add_argument("--json", default=None, help="default bench/results/tenants-<line>.json")
    args = p.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    line = "2026" if not args.neo4j.startswith("5.") else "5.26"
    out = Path(args.json or ROOT / "bench" / "results" / f"tenants-{line}.json")
    sizes = [max(args.smallest, args.largest // r) for r in range(1, args.subjects + 1)]
    per_subject = corpus_texts(sizes, args.seed)
    all_texts = [t for own in per_subject for t in own]
    embedder = get_embedder()
    key = hashlib.sha256(json.dumps([sizes, args.seed, embedder.model_name]).encode()).hexdigest()[
        :12
    ]
    started = time.perf_counter()
    matrix = vectors(all_texts, embedder, args, key)
    embed_s = time.perf_counter() - started
    lookup = Lookup(embedder, all_texts, matrix)
    overrides: dict[str, Any] = {"neo4j_version_range": f"[{args.neo4j}]"}
    if line == "2026":
        overrides["java_home"] = args.java21
    neo = BenchNeo4j(f"tenants-{line}", heap="2g", pagecache="1g", **overrides)
    settings, state = neo.settings, neo.state
    db = neo.database()
    run_id = uuid.uuid4().hex[:6]
    results: dict[str, Any] = {}
    try:
        server = server_info(db)
        db.apply_schema()
        service = service_for(settings, db, lookup, get_tokenizer())
        t0 = time.perf_counter()
        for rank, own in enumerate(per_subject, start=1):
            path = state / "subject.jsonl"
            path.write_text("".join(json.dumps(r) + "\n" for r in rows(own)), encoding="utf-8")
            import_file(service, Binding(f"tenant-{run_id}-{rank}", "default", "human", "b"), path)
            if rank % 50 == 0 or rank == len(sizes):
                done = sum(sizes[:rank])
                print(
                    f"  {rank}/{len(sizes)} subjects, {done} atoms "
                    f"({done / (time.perf_counter() - t0):.0f} atoms/s)",
                    file=sys.stderr,
                    flush=True,
                )
        load_s = time.perf_counter() - t0
        db.read("meta/await_indexes", timeoutSeconds=3600)
        total = sum(sizes)
        filtered = vector_filtered(db)
        print(
            f"Neo4j {server['version']}: loaded {total} atoms in {len(sizes)} subjects in "
            f"{load_s:.0f} s; in-index filter: {filtered}",
            flush=True,
        )
        exact_max = settings.ranking.vector_exact_max
        at_most = next((r for r, n in enumerate(sizes, start=1) if n <= exact_max), len(sizes))
        picks = {
            "largest": 1,
            "exactMax": at_most,
            "medium": (len(sizes) + 1) // 2,
            "smallest": len(sizes),
        }
        rng = np.random.default_rng(args.seed + 1)
        for label, rank in picks.items():
            r = measure_subject(
                service,
                settings,
                f"tenant-{run_id}-{rank}",
                per_subject[rank - 1],
                args.queries,
                rng,
            )
            r["rank"] = rank
            results[label] = r
            svc, only = r["vectorLeg"]["service"], r["vectorLeg"]["indexOnly"]
            print(
                f"  {label:<8} {r['atoms']:>6} atoms: search {r['search']['p50Ms']}/"
                f"{r['search']['p95Ms']} ms {r['search']['vectorModes']}, read "
                f"{r['read']['p50Ms']}/{r['read']['p95Ms']} ms; vector leg {svc['p50Ms']}/"
                f"{svc['p95Ms']} ms {svc['modes']} R@10 {svc['recallAt10']}; index only "
                f"{only['p50Ms']}/{only['p95Ms']} ms {only['modes']} R@10 {only['recallAt10']}; "
                f"exact {r['exactScan']['p50Ms']}/{r['exactScan']['p95Ms']} ms; load "
                f"{r['loadAverage']}",
                flush=True,
            )
        neo4j_rss = rss_mb(neo.pid) if neo.pid else None
    finally:
        db.close()
        neo.close()
    report = {
        "benchmark": "many subjects in one database: search, read and the vector leg per subject",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "bench/tenants.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "neo4j": server,
        "inIndexFilter": filtered,
        "scale": {
            "subjects": len(sizes),
            "atoms": sum(sizes),
            "largest": sizes[0],
            "smallest": sizes[-1],
            "sizes": "max(smallest, largest / rank)",
        },
        "vectors": "seeded random" if args.random_vectors else embedder.model_name,
        "embedSeconds": round(embed_s, 1),
        "loadSeconds": round(load_s, 1),
        "atomsPerSecond": round(sum(sizes) / load_s, 1),
        "candidateK": settings.ranking.max_seeds * settings.ranking.candidate_oversample,
        "vectorExactMax": settings.ranking.vector_exact_max,
        "subjects": results,
        "neo4jRssMb": neo4j_rss,
        "serviceRssMb": rss_mb(),
        "loadAverageEnd": load(),
        "cpus": os.cpu_count(),
        "baseline": "exact scan of the subject (same run, same Neo4j)",
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
