"""Benchmark: ``graphsvc export`` streams — its memory does not grow with the subject.

Run::

    .venv/bin/python bench/export.py [--sizes 2000,20000] [--page-size 500]
                                     [--json bench/results/export.json]

For each size it bulk-loads a subject (``bench/read.py``'s loader: atoms with two
links each, pooled embeddings since the export never reads them), then exports it as
GraphML and as node-link JSON into a temporary file through
:func:`graphsvc.ops.export.export_graph`, measuring the peak of Python allocations
during the export (``tracemalloc``) and the throughput. It prints, for the largest
size against the first (the baseline, same run), the ratio of atoms and the ratio of
peak memory: streaming means the memory ratio stays near 1 while the atom ratio is
10. Results go to ``bench/results/export.json``.

Neo4j is the managed one (started for the run, stopped at the end) unless
``GRAPHSVC_NEO4J_URI`` points at a server.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from read import load  # noqa: E402  (bench/read.py, path set up just above)

from bench.harness import BenchNeo4j  # noqa: E402
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.ops.export import export_graph  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.service import Service  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402


def measure(service: Service, binding: Binding, fmt: str, page_size: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="graphsvc-bench-export-") as tmp:
        path = Path(tmp) / f"out.{fmt}"
        tracemalloc.start()
        t0 = time.perf_counter()
        with path.open("w", encoding="utf-8", newline="") as fh:
            report = export_graph(
                service.db,
                binding,
                fmt,
                fh,
                public_keys=service.verification_keys,
                page_size=page_size,
            )
        seconds = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        size = path.stat().st_size
    return {
        "format": fmt,
        "atoms": report.atoms,
        "nodes": report.nodes,
        "edges": report.edges,
        "seconds": round(seconds, 3),
        "atomsPerSecond": round(report.atoms / seconds),
        "peakPythonMiB": round(peak / 2**20, 2),
        "fileMiB": round(size / 2**20, 2),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="2000,20000")
    p.add_argument("--page-size", type=int, default=500)
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "export.json"))
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    neo = BenchNeo4j("export")
    settings = neo.settings
    db = neo.database()
    rows: list[dict[str, Any]] = []
    try:
        db.apply_schema()
        service = service_for(settings, db, get_embedder(), get_tokenizer())
        run = uuid.uuid4().hex[:8]
        for n in sizes:
            subject = f"bench-export-{run}-{n}"
            print(f"loading {n} atoms...", file=sys.stderr, flush=True)
            load(service, subject, n, seed=11, mode="pooled", pool=200)
            binding = Binding(subject, "default", "human", "bench")
            for fmt in ("graphml", "node-link"):
                row = {"size": n, **measure(service, binding, fmt, args.page_size)}
                rows.append(row)
                print(json.dumps(row), flush=True)
    finally:
        db.close()
        neo.close()
    first, last = sizes[0], sizes[-1]
    ratios = {}
    for fmt in ("graphml", "node-link"):
        a = next(r for r in rows if r["size"] == first and r["format"] == fmt)
        b = next(r for r in rows if r["size"] == last and r["format"] == fmt)
        ratios[fmt] = {
            "atomsRatio": round(b["atoms"] / a["atoms"], 2),
            "peakMemoryRatio": round(b["peakPythonMiB"] / a["peakPythonMiB"], 2),
            "throughputRatio": round(b["atomsPerSecond"] / a["atomsPerSecond"], 2),
        }
        print(
            f"{fmt}: {last} vs {first} atoms (x{ratios[fmt]['atomsRatio']}): peak Python "
            f"memory x{ratios[fmt]['peakMemoryRatio']}, throughput "
            f"x{ratios[fmt]['throughputRatio']}"
        )
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "benchmark": "export",
                "pageSize": args.page_size,
                "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
                "loadAverage": os.getloadavg()[0],
                "rows": rows,
                "ratios": ratios,
            },
            indent=1,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
