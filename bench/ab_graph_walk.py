"""Paired A/B benchmark of the typed graph walk between two source trees.

Run::

    .venv/bin/python bench/ab_graph_walk.py --base REV [--candidate PATH]
                                            [--atoms 10000] [--walks 200] [--warmup 40]

``--base`` is a git revision (checked out into a temporary worktree) or a directory
holding a graphsvc tree; ``--candidate`` a directory (default: this repository). As
``bench/ab_read.py`` does for ``read``: both trees walk *at the same time* against the
*same* Neo4j and corpus (``bench/graph_walk.py``'s, bulk-loaded once by this process),
each in its own worker process (``bench/ab_walk_worker.py``, serve's collector policy),
every timed walk (``bench/graph_walk.py``'s three-level query from one random page
start) made by both back to back in alternating order, so slow moments of the machine
hit both arms alike. Reported: p50/p95/mean per arm, the median of the per-walk
ratios candidate/base and a bootstrap 95% interval of the ratio of the means (1.00
inside: no difference beyond noise); both arms must return the same atoms. Written to
``bench/results/ab_graph_walk.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import statistics
import sys
import tempfile
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ab_read import Worker, _tree, bootstrap_ratio, drop_tree, tree_arguments  # noqa: E402
from bench.graph_walk import load, pct  # noqa: E402
from bench.harness import BenchNeo4j, child_env  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

WORKER = Path(__file__).resolve().parent / "ab_walk_worker.py"


def _walks(args: argparse.Namespace, trees: list[tuple[str, Path]]) -> dict[str, list[float]]:
    """Load the corpus, start one worker per tree, and time the paired walks."""
    neo = BenchNeo4j("ab-walk")
    workers: list[Worker] = []
    try:
        db = neo.database()
        db.apply_schema()
        subject = f"bench-ab-walk-{uuid.uuid4().hex[:8]}"
        parts = SimpleNamespace(db=db, tokenizer=get_tokenizer())
        ids, load_s = load(parts, subject, args.atoms, args.seed)  # type: ignore[arg-type]
        db.close()
        print(f"loaded {args.atoms} atoms in {load_s:.1f} s", file=sys.stderr, flush=True)
        workers = [Worker(name, tree, child_env(neo), WORKER) for name, tree in trees]
        rng = random.Random(args.seed + 1)
        starts = [ids[rng.randrange(0, len(ids) - args.page - 1)] for _ in range(args.walks)]
        warm = [ids[rng.randrange(0, len(ids) - args.page - 1)] for _ in range(args.warmup)]
        times: dict[str, list[float]] = {name: [] for name, _ in trees}
        for i, start in enumerate(warm + starts):
            answers = []
            for w in workers if i % 2 == 0 else workers[::-1]:
                answer = w.ask({"subject": subject, "start": start, "page": args.page})
                answers.append(answer["atoms"])
                if i >= len(warm):
                    times[w.name].append(answer["ms"])
            if answers[0] != answers[1]:
                raise RuntimeError(f"the two trees walked different atoms from {start}")
            if i >= len(warm) and (i + 1 - len(warm)) % 50 == 0:
                print(f"  {i + 1 - len(warm)}/{len(starts)} paired walks", file=sys.stderr)
        return times
    finally:
        for w in workers:
            w.close()
        neo.close()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    tree_arguments(p)
    p.add_argument("--atoms", type=int, default=10_000)
    p.add_argument("--page", type=int, default=100)
    p.add_argument("--walks", type=int, default=200)
    p.add_argument("--warmup", type=int, default=40)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "ab_graph_walk.json"))
    args = p.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tmp_dir = tempfile.TemporaryDirectory(prefix="graphsvc-bench-ab-walk-")
    base_tree, base_rev = _tree(args.base, Path(tmp_dir.name))
    cand_tree, cand_rev = _tree(args.candidate, Path(tmp_dir.name))
    try:
        times = _walks(args, [("base", base_tree), ("candidate", cand_tree)])
    finally:
        drop_tree(args.base, base_tree)
        tmp_dir.cleanup()
    report = _report(args, times, {"base": base_rev, "candidate": cand_rev})
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    for name in ("base", "candidate"):
        r = report[name]
        ms = f"p50 {r['p50Ms']} ms  p95 {r['p95Ms']} ms  mean {r['meanMs']} ms"
        print(f"{name:>9} {r['tree']}: {ms}")
    lo, hi = report["meanRatio95"]
    print(
        f"candidate/base: mean {report['meanRatio']:.3f} (95% {lo:.3f}–{hi:.3f}), "
        f"median per walk {report['medianPerWalkRatio']:.3f}"
    )
    print(f"wrote {args.json}")
    return 0


def _report(
    args: argparse.Namespace, times: dict[str, list[float]], revs: dict[str, str]
) -> dict[str, Any]:
    a, b = times["base"], times["candidate"]

    def arm(name: str) -> dict[str, Any]:
        t = times[name]
        return {
            "tree": revs[name],
            "p50Ms": round(pct(t, 0.5), 2),
            "p95Ms": round(pct(t, 0.95), 2),
            "meanMs": round(statistics.fmean(t), 2),
        }

    return {
        "benchmark": "paired A/B typed graph walk (same Neo4j, same corpus, interleaved)",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "loadAverage": [round(x, 2) for x in os.getloadavg()],
        "settings": {"atoms": args.atoms, "page": args.page, "walks": args.walks},
        "base": arm("base"),
        "candidate": arm("candidate"),
        "medianPerWalkRatio": round(statistics.median(y / x for x, y in zip(a, b, strict=True)), 3),
        "meanRatio": round(statistics.fmean(b) / statistics.fmean(a), 3),
        "meanRatio95": bootstrap_ratio(a, b),
    }


if __name__ == "__main__":
    raise SystemExit(main())
