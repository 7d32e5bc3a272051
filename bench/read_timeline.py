"""Diagnostic: where one ``read`` spends its time, as a timeline per thread.

Run::

    .venv/bin/python bench/read_timeline.py [--size 10000] [--reads 3] [--embed pooled]
                                            [--warmup 200]

Loads a corpus like ``bench/read.py`` (own managed Neo4j, or ``GRAPHSVC_NEO4J_URI``),
waits for Neo4j to go idle, warms up with other queries, then prints, for a few
reads, every Cypher query, the query embedding, the solve, the packing and the
manifest write with its thread, start and end (ms from the start of the read).
Wall-clock times on a shared machine: compare shapes, not single numbers. It wraps
functions of graphsvc from outside (no tracing code in the service itself).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import read as bench_read  # noqa: E402  (bench/read.py: corpus, queries, settle)

import graphsvc.ops.evaluate as evaluate_mod  # noqa: E402
import graphsvc.ops.read as read_mod  # noqa: E402
import graphsvc.store.closure as closure_mod  # noqa: E402
import graphsvc.store.retrieval as expansion_mod  # noqa: E402
import graphsvc.store.retrieval as retrieval_mod  # noqa: E402
import graphsvc.store.views as views_mod  # noqa: E402
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.core.requests import ReadRequest  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.localdb import LocalNeo4j  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.settings import Settings  # noqa: E402
from graphsvc.store.connection import Database  # noqa: E402
from graphsvc.store.connection import run as plain_run  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

_T0 = [0.0]
_LOG: list[tuple[str, str, float, float]] = []


def _note(label: str, start: float) -> None:
    end = time.perf_counter()
    _LOG.append((threading.current_thread().name, label, start - _T0[0], end - _T0[0]))


def _timed_run(tx: Any, name: str, **params: Any) -> list[dict[str, Any]]:
    start = time.perf_counter()
    rows = plain_run(tx, name, **params)
    _note(name, start)
    return rows


def _wrap(module: Any, attr: str, label: str) -> None:
    inner: Callable[..., Any] = getattr(module, attr)

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            _note(label, start)

    setattr(module, attr, timed)


def _instrument() -> None:
    for module in (retrieval_mod, expansion_mod, closure_mod, views_mod):
        module.run = _timed_run  # type: ignore[attr-defined]
    inner = Database._autocommit

    def timed_autocommit(self: Database, name: str, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return inner(self, name, *args, **kwargs)
        finally:
            _note(name + " (own tx)", start)

    Database._autocommit = timed_autocommit  # type: ignore[method-assign]
    _wrap(read_mod, "pack", "PACK")
    _wrap(read_mod, "_record", "WRITE manifest")
    _wrap(evaluate_mod, "propagate", "solve")
    _wrap(evaluate_mod, "query_vector", "EMBED query")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=10_000)
    p.add_argument("--reads", type=int, default=3)
    p.add_argument("--embed", choices=("real", "pooled"), default="pooled")
    p.add_argument("--budget", type=int, default=2000)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--warmup", type=int, default=bench_read.WARMUP_READS)
    args = p.parse_args(argv)
    external = os.environ.get("GRAPHSVC_NEO4J_URI", "")
    with tempfile.TemporaryDirectory(prefix="graphsvc-read-timeline-") as tmp:
        base = Settings.from_env(state_dir=Path(tmp))
        local: LocalNeo4j | None = None
        pid: int | None = None
        if external:
            settings = base
        else:
            base = base.with_(neo4j_heap="2g", neo4j_pagecache="1g")
            local = LocalNeo4j(base, name="timeline", port=0, auth=False)
            inst = local.start(die_with_parent=True)
            settings, pid = base.with_(neo4j_uri=inst.uri), inst.pid
        db = Database(
            settings.neo4j.uri,
            settings.neo4j.user,
            settings.neo4j.password,
            settings.neo4j.database,
        )
        try:
            db.apply_schema()
            service = service_for(settings, db, get_embedder(), get_tokenizer())
            subject = f"timeline-{uuid.uuid4().hex[:8]}-{args.size}"
            print(f"loading {args.size} atoms...", file=sys.stderr, flush=True)
            bench_read.load(service, subject, args.size, 7 + args.size, args.embed, 10_000)
            bench_read.settle(pid)
            binding = Binding(subject, "default", "human", "timeline")
            for q in bench_read.queries(args.warmup, 1_007):
                service.read(binding, ReadRequest(q, args.budget, depth=args.depth))
            _instrument()
            for q in bench_read.queries(args.reads, 7):
                _LOG.clear()
                _T0[0] = time.perf_counter()
                service.read(binding, ReadRequest(q, args.budget, depth=args.depth))
                total = (time.perf_counter() - _T0[0]) * 1000
                print(f"--- {q!r}: {total:.1f} ms")
                for thread, label, a, b in sorted(_LOG, key=lambda x: x[2]):
                    print(
                        f"{thread[-16:]:>16} {label:34} {a * 1000:7.1f} → {b * 1000:7.1f}"
                        f"  ({(b - a) * 1000:5.1f})"
                    )
        finally:
            db.close()
            if local is not None:
                local.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
