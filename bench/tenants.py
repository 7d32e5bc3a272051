"""Benchmark (scaled down): many subjects of Zipf-distributed sizes sharing one database.

Run::

    .venv/bin/python bench/tenants.py [--subjects 40] [--largest 3000] [--smallest 20]
                                      [--queries 40] [--json bench/results/tenants.json]

Subject *r* (rank 1..``--subjects``) gets ``max(smallest, largest / r)`` atoms, loaded
with ``graphsvc import``'s code (:func:`graphsvc.bulk_import.import_file`) and seeded
random unit vectors as embeddings (the vector leg's cost and recall do not depend on
what the vectors mean). For the largest, a medium (the median rank) and the smallest
subject, ``--queries`` query vectors (a stored vector of that subject plus noise) go
through the vector leg the service uses (:func:`graphsvc.store.retrieval.
semantic_candidates`: the shared index's top-k filtered by subject, widened once, then
an exact scan of the subject), timed, and compared with the exact scan of that subject
(recall@10). This is the issue's "thousand tenants" question at a small scale; the
scale run is recorded in the JSON. The baseline in the same run is the exact scan.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import BenchNeo4j  # noqa: E402
from bench.ingest import Precomputed, rows, texts  # noqa: E402  (path set up just above)
from graphsvc.bulk_import import import_file  # noqa: E402
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.store.retrieval import semantic_candidates  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--subjects", type=int, default=40)
    p.add_argument("--largest", type=int, default=3000)
    p.add_argument("--smallest", type=int, default=20)
    p.add_argument("--queries", type=int, default=40)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "tenants.json"))
    args = p.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    neo = BenchNeo4j("tenants", heap="2g", pagecache="1g")
    settings, state = neo.settings, neo.state
    db = neo.database()
    rng = np.random.default_rng(args.seed)
    sizes = [max(args.smallest, args.largest // r) for r in range(1, args.subjects + 1)]
    run_id = uuid.uuid4().hex[:6]
    results: dict[str, Any] = {}
    try:
        db.apply_schema()
        embedder = get_embedder()
        vectors: dict[str, list[float]] = {}
        stored: dict[int, np.ndarray] = {}
        started = time.perf_counter()
        for rank, n in enumerate(sizes, start=1):
            corpus = [f"[{run_id}-{rank}] {t}" for t in texts(n, args.seed + rank)]
            vecs = rng.normal(size=(n, embedder.dimension))
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            vectors.update(zip(corpus, vecs.tolist(), strict=True))
            stored[rank] = vecs
            path = state / f"s{rank}.jsonl"
            path.write_text("".join(json.dumps(r) + "\n" for r in rows(corpus)), encoding="utf-8")
            service = service_for(settings, db, Precomputed(embedder, vectors), get_tokenizer())
            import_file(service, Binding(f"tenant-{run_id}-{rank}", "default", "human", "b"), path)
        load_s = time.perf_counter() - started
        total = sum(sizes)
        print(f"loaded {total} atoms in {len(sizes)} subjects in {load_s:.0f} s", flush=True)
        k = settings.max_seeds * settings.candidate_oversample
        picks = {"largest": 1, "medium": (len(sizes) + 1) // 2, "smallest": len(sizes)}
        for label, rank in picks.items():
            subject = f"tenant-{run_id}-{rank}"
            leg: list[float] = []
            exact: list[float] = []
            recall: list[float] = []
            modes: dict[str, int] = {}
            for _ in range(args.queries):
                base_vec = stored[rank][rng.integers(len(stored[rank]))]
                q = base_vec + rng.normal(scale=0.05, size=base_vec.shape)
                qv = (q / np.linalg.norm(q)).tolist()
                t0 = time.perf_counter()
                hits = semantic_candidates(
                    db, subject=subject, vector=qv, k=k, limit=10, include_archived=False
                )
                leg.append((time.perf_counter() - t0) * 1000)
                modes[hits.mode] = modes.get(hits.mode, 0) + 1
                t0 = time.perf_counter()
                truth = db.read_rows(
                    "search/vector_candidates_exact",
                    embedding=qv,
                    subject=subject,
                    includeArchived=False,
                    limit=10,
                )
                exact.append((time.perf_counter() - t0) * 1000)
                want = {r["atomId"] for r in truth}
                got = {r["atomId"] for r in hits.rows}
                recall.append(len(want & got) / max(1, len(want)))
            results[label] = {
                "subject": subject,
                "atoms": sizes[rank - 1],
                "vectorLegP50Ms": round(statistics.median(leg), 1),
                "vectorLegP95Ms": round(pct(leg, 0.95), 1),
                "exactScanP50Ms": round(statistics.median(exact), 1),
                "exactScanP95Ms": round(pct(exact, 0.95), 1),
                "recallAt10": round(statistics.mean(recall), 3),
                "modes": modes,
                "loadAverage": [round(x, 2) for x in os.getloadavg()],
            }
            r = results[label]
            print(
                f"  {label:<8} {r['atoms']:>6} atoms: vector leg p50/p95 "
                f"{r['vectorLegP50Ms']}/{r['vectorLegP95Ms']} ms ({modes}), exact scan "
                f"{r['exactScanP50Ms']}/{r['exactScanP95Ms']} ms, recall@10 {r['recallAt10']}",
                flush=True,
            )
    finally:
        db.close()
        neo.close()
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "bench/tenants.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "scale": {
            "subjects": len(sizes),
            "atoms": sum(sizes),
            "largest": sizes[0],
            "smallest": sizes[-1],
            "note": "scaled down from the issue's 1,000 subjects / 50k largest (shared machine)",
        },
        "loadSeconds": round(load_s, 1),
        "candidateK": k,
        "subjects": results,
        "cpus": os.cpu_count(),
    }
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
