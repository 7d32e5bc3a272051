"""Paired A/B benchmark of ``read`` between two source trees on one Neo4j and one corpus.

Run::

    .venv/bin/python bench/ab_read.py --base REV [--candidate PATH] [--size 10000]
                                      [--reads 300] [--warmup 200] [--json PATH]

``--base`` is a git revision (checked out into a temporary worktree) or a directory
holding a graphsvc tree; ``--candidate`` is a directory (default: this repository).
A refactor must not slow reads down, and two separate runs of ``bench/read.py`` on a
shared 2-core machine differ by more than the effect looked for (load average moves
p95 by tens of percent). So both trees run *at the same time* against the *same*
Neo4j and corpus, each in its own worker process (``bench/ab_worker.py``, run with
the tree first on ``PYTHONPATH``; it checks that ``graphsvc`` was imported from that
tree): every timed query is read by both workers back to back, in alternating order
(A then B, then B then A), so slow moments of the machine hit both arms alike.

Each worker times ``read(budget 2,000, depth 2)`` in process, query embedding
included, as ``bench/read.py`` does; the corpus is ``bench/read.py``'s (same
generator, loaded with its ``UNWIND`` loader by this process). Before the timed
reads each worker makes ``--warmup`` untimed reads with other texts.

Reported: p50/p95/mean per arm, the median of the per-query ratios candidate/base,
a bootstrap 95% interval of the ratio of the means (1.00 inside the interval:
no difference beyond noise), and how many reads packed differently (text, items,
selection, closure validation, manifest: ``bench/ab_worker.py``'s digest).
Written to ``bench/results/ab_read.json``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphsvc.embed import get_embedder  # noqa: E402  (path set up just above)
from graphsvc.localdb import LocalNeo4j  # noqa: E402
from graphsvc.settings import Settings  # noqa: E402
from graphsvc.store.connection import Database  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

WORKER = Path(__file__).resolve().parent / "ab_worker.py"


def _bench_read() -> ModuleType:
    """``bench/read.py`` as a module (its corpus generator, loader and percentiles)."""
    spec = importlib.util.spec_from_file_location("bench_read", ROOT / "bench" / "read.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tree(spec: str, tmp: Path) -> tuple[Path, str]:
    """A directory holding the tree named by ``spec`` (a directory or a git revision)."""
    path = Path(spec)
    if path.is_dir():
        rev = subprocess.run(
            ["git", "-C", str(path), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        return path.resolve(), rev or str(path)
    out = tmp / f"tree-{spec.replace('/', '_')}"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(out), spec],
        check=True,
        capture_output=True,
    )
    return out, spec


def tree_arguments(p: argparse.ArgumentParser) -> None:
    """``--base`` and ``--candidate``: the two trees of an A/B."""
    p.add_argument("--base", required=True, help="git revision or directory of the baseline")
    p.add_argument("--candidate", default=str(ROOT), help="directory of the candidate tree")


def drop_tree(spec: str, tree: Path) -> None:
    """Remove the worktree :func:`_tree` checked out for ``spec`` (a directory stays)."""
    if not Path(spec).is_dir():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
            check=False,
            capture_output=True,
        )


class Worker:
    """One worker process reading with the graphsvc of one tree."""

    def __init__(self, name: str, tree: Path, env: dict[str, str], script: Path = WORKER) -> None:
        self.name = name
        self.proc = subprocess.Popen(
            [sys.executable, str(script), str(tree)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**env, "PYTHONPATH": str(tree)},
            cwd=str(tree),
            text=True,
        )
        self.hello = self._answer()

    def _answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker {self.name} exited (rc {self.proc.wait()})")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"worker {self.name}: {answer['error']}")
        return answer

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return self._answer()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


def bootstrap_ratio(a: Sequence[float], b: Sequence[float], rounds: int = 2000) -> list[float]:
    """95% interval of mean(b)/mean(a), resampling the queries (pairs stay together)."""
    rng = random.Random(1)
    n = len(a)
    ratios = []
    for _ in range(rounds):
        idx = [rng.randrange(n) for _ in range(n)]
        ratios.append(sum(b[i] for i in idx) / sum(a[i] for i in idx))
    ratios.sort()
    return [round(ratios[int(0.025 * rounds)], 3), round(ratios[int(0.975 * rounds)], 3)]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    tree_arguments(p)
    p.add_argument("--size", type=int, default=10_000)
    p.add_argument("--reads", type=int, default=300)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--budget", type=int, default=2000)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "ab_read.json"))
    args = p.parse_args(argv)
    br = _bench_read()

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tmp_dir = tempfile.TemporaryDirectory(prefix="graphsvc-bench-ab-")
    tmp = Path(tmp_dir.name)
    base_tree, base_rev = _tree(args.base, tmp)
    cand_tree, cand_rev = _tree(args.candidate, tmp)
    settings = Settings.from_env(state_dir=tmp / "state")
    settings = settings.with_(neo4j_heap="2g", neo4j_pagecache="1g")
    local = LocalNeo4j(settings, name="bench-ab", port=0, auth=False)
    inst = local.start(die_with_parent=True)
    workers: list[Worker] = []
    try:
        db = Database(inst.uri, "", "", settings.neo4j.database)
        db.apply_schema()
        subject = f"bench-ab-{uuid.uuid4().hex[:8]}"
        print(f"loading {args.size} atoms into {subject}...", file=sys.stderr, flush=True)
        parts = SimpleNamespace(db=db, embedder=get_embedder(), tokenizer=get_tokenizer())
        br.load(parts, subject, args.size, args.seed + args.size, "real", 10_000)
        db.close()
        br.settle(inst.pid)
        env = {
            **os.environ,
            "GRAPHSVC_NEO4J_URI": inst.uri,
            "GRAPHSVC_NEO4J_USER": "neo4j",
            "GRAPHSVC_NEO4J_PASSWORD": "",
            "GRAPHSVC_STATE_DIR": str(tmp / "state"),
        }
        # Both started before either is timed, so neither loads its model during the
        # other's reads.
        workers = [Worker("base", base_tree, env), Worker("candidate", cand_tree, env)]
        qs = br.queries(args.reads, args.seed)
        warm = br.unseen(args.warmup, args.seed + 1_000, set(qs))
        common = {"subject": subject, "budget": args.budget, "depth": args.depth}
        for i, q in enumerate(warm):
            for w in workers if i % 2 == 0 else workers[::-1]:
                w.ask({**common, "query": q})
        times: dict[str, list[float]] = {"base": [], "candidate": []}
        tokens: dict[str, list[int]] = {"base": [], "candidate": []}
        packed: dict[str, list[str | None]] = {"base": [], "candidate": []}
        for i, q in enumerate(qs):
            for w in workers if i % 2 == 0 else workers[::-1]:
                answer = w.ask({**common, "query": q})
                times[w.name].append(answer["ms"])
                tokens[w.name].append(answer["tokens"])
                packed[w.name].append(answer.get("packed"))
            if (i + 1) % 50 == 0:
                print(f"  {i + 1}/{len(qs)} paired reads", file=sys.stderr, flush=True)
    finally:
        for w in workers:
            w.close()
        local.stop()
        drop_tree(args.base, base_tree)
        tmp_dir.cleanup()

    def arm(name: str) -> dict[str, Any]:
        t = times[name]
        return {
            "p50Ms": round(br.percentile(t, 50), 2),
            "p95Ms": round(br.percentile(t, 95), 2),
            "meanMs": round(statistics.fmean(t), 2),
            "meanTokens": round(statistics.fmean(tokens[name]), 1),
        }

    a, b = times["base"], times["candidate"]
    per_query = sorted(y / x for x, y in zip(a, b, strict=True))
    report = {
        "benchmark": "paired A/B read latency (same Neo4j, same corpus, interleaved)",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "loadAverage": [round(x, 2) for x in os.getloadavg()],
        "settings": {
            "size": args.size,
            "reads": args.reads,
            "warmupReads": args.warmup,
            "budget": args.budget,
            "depth": args.depth,
        },
        "base": {"tree": base_rev, **arm("base")},
        "candidate": {"tree": cand_rev, **arm("candidate")},
        "medianPerQueryRatio": round(statistics.median(per_query), 3),
        "meanRatio": round(statistics.fmean(b) / statistics.fmean(a), 3),
        "meanRatio95": bootstrap_ratio(a, b),
        "sameTokens": tokens["base"] == tokens["candidate"],
        # Text, items in order, selection, closure validation and manifest (less its
        # id and evaluation time) per query: how many differ between the arms.
        "packedDiffering": sum(
            x != y for x, y in zip(packed["base"], packed["candidate"], strict=True)
        ),
    }
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    for name in ("base", "candidate"):
        r = report[name]
        print(
            f"{name:>9} {r['tree']}: p50 {r['p50Ms']:.1f} ms  p95 {r['p95Ms']:.1f} ms  "
            f"mean {r['meanMs']:.1f} ms"
        )
    lo, hi = report["meanRatio95"]
    print(
        f"candidate/base: mean {report['meanRatio']:.3f} (95% {lo:.3f}–{hi:.3f}), "
        f"median per query {report['medianPerQueryRatio']:.3f}; "
        f"same packed tokens: {report['sameTokens']}; "
        f"reads packed differently: {report['packedDiffering']} of {len(a)}"
    )
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
