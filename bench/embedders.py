"""Benchmark: what each embedding model costs (``GRAPHSVC_EMBEDDING_MODEL``), as ratios.

Run::

    .venv/bin/python bench/embedders.py [--texts 150] [--json bench/results/embedders.json]

Each model of :data:`graphsvc.embed.models.MODELS` is loaded in a process of its own
(so its resident memory is its own), through graphsvc's embedder
(:func:`graphsvc.embed.get_embedder`: onnxruntime for queries and bodies), and timed
on the LoCoMo development texts (``../shared/data/locomo``): ``--texts`` questions
embedded one at a time (a search's query embedding), the same number of dialog turns one
at a time, and the turns as one batch (the import's path: texts per second). Printed
and written as ratios against all-MiniLM-L6-v2, measured in the same run. Quality is
``bench/quality.py --model``'s (docs/search-quality.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import rss_mb  # noqa: E402
from bench.quality import DEFAULT_DATA, load_conversations  # noqa: E402
from graphsvc.embed.models import DEFAULT_MODEL, MODELS  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(model: str, n: int, data: Path) -> dict[str, Any]:
    """One model's figures (run in a child process)."""
    from graphsvc.embed import get_embedder

    convs = load_conversations(data)
    questions = [q.text for c in convs for q in c.questions][:n]
    turns = [t.text for c in convs for t in c.turns][:n]
    t0 = time.perf_counter()
    embedder = get_embedder(model)
    embedder.embed(["warm-up query"])
    load_s = time.perf_counter() - t0
    out: dict[str, Any] = {
        "model": embedder.model_name,
        "dimension": embedder.dimension,
        "runtime": embedder.query_runtime,
        "loadSeconds": round(load_s, 2),
    }
    for label, texts in (("query", questions), ("body", turns)):
        times = []
        for text in texts:
            t = time.perf_counter()
            embedder.embed([text])
            times.append((time.perf_counter() - t) * 1000)
        out[f"{label}P50Ms"] = round(pct(times, 0.5), 2)
        out[f"{label}P95Ms"] = round(pct(times, 0.95), 2)
    t = time.perf_counter()
    embedder.embed(turns)
    out["batchTextsPerSecond"] = round(len(turns) / (time.perf_counter() - t), 1)
    out["rssMb"] = rss_mb()
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--texts", type=int, default=150)
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "embedders.json"))
    p.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.texts, Path(args.data))))
        return 0
    results: dict[str, dict[str, Any]] = {}
    for key in MODELS:
        print(f"measuring {key} ...", file=sys.stderr, flush=True)
        proc = subprocess.run(
            [sys.executable, __file__, "--child", key, "--texts", str(args.texts),
             "--data", args.data],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        results[key] = json.loads(proc.stdout.strip().splitlines()[-1])
    base = results[DEFAULT_MODEL]
    for r in results.values():
        r["ratios"] = {
            k: round(r[k] / base[k], 2)
            for k in ("queryP50Ms", "queryP95Ms", "bodyP50Ms", "batchTextsPerSecond", "rssMb")
            if r.get(k) and base.get(k)
        }
    report = {
        "benchmark": "embedders",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "bench/embedders.py " + " ".join(sys.argv[1:]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "loadAverage": [round(x, 2) for x in os.getloadavg()],
        "baseline": DEFAULT_MODEL,
        "models": results,
    }
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"{'model':<20} {'dim':>4} {'query p50/p95 ms':>17} {'body p50 ms':>11} "
          f"{'batch texts/s':>13} {'RSS MB':>7}  ratios vs {DEFAULT_MODEL}")  # fmt: skip
    for key, r in results.items():
        print(
            f"{key:<20} {r['dimension']:>4} {r['queryP50Ms']:>8.1f}/{r['queryP95Ms']:<8.1f} "
            f"{r['bodyP50Ms']:>11.1f} {r['batchTextsPerSecond']:>13.1f} {r['rssMb']:>7.0f}  "
            f"{r['ratios']}"
        )
    print(f"load average {report['loadAverage']}; wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
