"""Benchmark: a search's and a read's evaluation on auto-commit reads vs a read transaction.

Run::

    .venv/bin/python bench/evaluate_reads.py [--atoms 300] [--block 150] [--rounds 6]
                                             [--json PATH]

Starts the managed Neo4j (or uses ``GRAPHSVC_NEO4J_URI``), writes ``--atoms`` short
atoms (``bench/load.py``'s generator) into one subject, and times ``service.search``
and ``service.read`` (budget 1,000) in process, one caller, in alternating blocks of
``--block`` calls: the shipped evaluation (``Database.read_each``, every query an
auto-commit read) and the baseline, the same process with ``read_each`` answered by
``Database.read_tx`` (one read transaction: BEGIN and COMMIT round trips around its
queries). The arms alternate in order (A B, then B A) for ``--rounds`` rounds after
untimed warm-up calls. Prints the median wall and CPU milliseconds per call of each
arm's blocks and their ratio (shipped / transaction), and writes
``bench/results/evaluate_reads.json``. The process's CPU includes the query
encoder's threads.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import BenchNeo4j  # noqa: E402
from bench.load import WORDS, seed_atoms  # noqa: E402
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.core.requests import ReadRequest, SearchRequest  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.store.connection import Database, Tx  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

T = TypeVar("T")
SHIPPED = Database.read_each


def in_a_transaction(self: Database, work: Callable[[Tx], T], *, label: str = "read") -> T:
    return self.read_tx(work, label=label)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--atoms", type=int, default=300)
    p.add_argument("--block", type=int, default=150)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "evaluate_reads.json"))
    args = p.parse_args()
    neo = BenchNeo4j("evaluate-reads")
    try:
        db = neo.database()
        db.apply_schema()
        service = service_for(neo.settings, db, get_embedder(), get_tokenizer())
        binding = Binding(f"bench-eval-{uuid.uuid4().hex[:8]}", "default", "human", "bench")
        print(f"writing {args.atoms} atoms...", file=sys.stderr, flush=True)
        seed_atoms(service, binding, args.atoms, random.Random(1))
        rng = random.Random(2)

        def call(op: str) -> None:
            text = " ".join(rng.sample(WORDS, 3))
            if op == "search":
                service.search(binding, SearchRequest(query=text, paged=False))
            else:
                service.read(
                    binding, ReadRequest(query=text, memory_token_budget=1000, paged=False)
                )

        for op in ("search", "read"):
            for _ in range(2 * args.block):
                call(op)
        blocks: dict[str, dict[str, list[tuple[float, float]]]] = {
            op: {"shipped": [], "transaction": []} for op in ("search", "read")
        }
        for rnd in range(args.rounds):
            arms = ("shipped", "transaction") if rnd % 2 == 0 else ("transaction", "shipped")
            for arm in arms:
                Database.read_each = SHIPPED if arm == "shipped" else in_a_transaction  # type: ignore[method-assign]
                for op in ("search", "read"):
                    cpu, wall = time.process_time(), time.perf_counter()
                    for _ in range(args.block):
                        call(op)
                    blocks[op][arm].append(
                        (
                            (time.perf_counter() - wall) / args.block * 1000,
                            (time.process_time() - cpu) / args.block * 1000,
                        )
                    )
        Database.read_each = SHIPPED  # type: ignore[method-assign]
        report: dict[str, Any] = {
            "benchmark": "evaluate_reads",
            "args": vars(args),
            "python": platform.python_version(),
            "results": {},
        }
        for op, by_arm in blocks.items():
            row: dict[str, Any] = {}
            for arm, values in by_arm.items():
                row[arm] = {
                    "wallMs": round(statistics.median(v[0] for v in values), 3),
                    "cpuMs": round(statistics.median(v[1] for v in values), 3),
                }
            for unit in ("wallMs", "cpuMs"):
                row[f"{unit}Ratio"] = round(row["shipped"][unit] / row["transaction"][unit], 3)
            report["results"][op] = row
            print(
                f"{op}: wall {row['transaction']['wallMs']:.2f} -> {row['shipped']['wallMs']:.2f}"
                f" ms (x{row['wallMsRatio']:.2f}), CPU {row['transaction']['cpuMs']:.2f} -> "
                f"{row['shipped']['cpuMs']:.2f} ms (x{row['cpuMsRatio']:.2f}); "
                "transaction -> auto-commit reads, medians of "
                f"{args.rounds} blocks of {args.block}"
            )
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1))
    finally:
        neo.close()


if __name__ == "__main__":
    main()
