"""Benchmark: search with the subject's term statistics kept per write generation.

Run::

    .venv/bin/python bench/term_statistics.py [--atoms 2000] [--queries 40]
                                              [--rounds 3] [--json PATH]

Writes ``--atoms`` sentences into one subject, then asks ``--queries`` seeded
three-word queries ``--rounds`` times, in process (``Service.search``, limit 10),
each query twice in a row in a random order of the two: once with the process's
statistics cache emptied first (the baseline: every search counts the subject's
statistics, as before the cache) and once with it as the previous round left it
(an untimed search of the same query just before, or the counted arm's, left its
terms known). Prints p50/p95 of
both and their ratio, the number of ``search/term_statistics`` reads of each arm,
and writes ``bench/results/term_statistics.json`` with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import uuid
from pathlib import Path
from statistics import quantiles
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import BenchNeo4j  # noqa: E402
from bench.load import WORDS, seed_atoms  # noqa: E402
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.core.requests import SearchRequest  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.telemetry.metrics import REGISTRY  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

_STATS_FACT = "termStatistics"  # graphsvc.process_state.term_statistics's db.facts key


def _reads() -> float:
    value = REGISTRY.get_sample_value(
        "graphsvc_neo4j_query_duration_seconds_count", {"query": "search/term_statistics"}
    )
    return value or 0.0


def _pct(values: list[float], q: int) -> float:
    return round(quantiles(values, n=100)[q - 1] * 1000, 2)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--atoms", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--json", default=str(ROOT / "bench" / "results" / "term_statistics.json"))
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    load_before = os.getloadavg()
    neo = BenchNeo4j("termstats")
    db = neo.database()
    try:
        db.apply_schema()
        service = service_for(neo.settings, db, get_embedder(), get_tokenizer())
        binding = Binding(f"bench-termstats-{uuid.uuid4().hex[:8]}", "default", "human", "b")
        print(f"writing {args.atoms} atoms...", file=sys.stderr, flush=True)
        seed_atoms(service, binding, args.atoms, rng)
        queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(args.queries)]
        for q in queries:  # warm-up: the JVM, the query plans, the embedder
            service.search(binding, SearchRequest(q, limit=10))
        times: dict[str, list[float]] = {"counted": [], "kept": []}
        reads: dict[str, float] = {"counted": 0.0, "kept": 0.0}
        for _ in range(args.rounds):
            for q in queries:
                arms = ["counted", "kept"]
                rng.shuffle(arms)
                if arms[0] == "kept":
                    # Untimed: the query's terms counted at this generation, as a
                    # process that asked them before has them.
                    service.search(binding, SearchRequest(q, limit=10))
                for arm in arms:
                    if arm == "counted":
                        db.facts.pop(_STATS_FACT, None)
                    before = _reads()
                    t0 = time.perf_counter()
                    service.search(binding, SearchRequest(q, limit=10))
                    times[arm].append(time.perf_counter() - t0)
                    reads[arm] += _reads() - before
        out: dict[str, Any] = {
            "atoms": args.atoms,
            "searchesPerArm": len(times["counted"]),
            "loadAverage": [round(x, 2) for x in load_before],
        }
        for arm, values in times.items():
            out[arm] = {"p50Ms": _pct(values, 50), "p95Ms": _pct(values, 95), "reads": reads[arm]}
        out["ratioP50"] = round(out["kept"]["p50Ms"] / out["counted"]["p50Ms"], 3)
        out["ratioP95"] = round(out["kept"]["p95Ms"] / out["counted"]["p95Ms"], 3)
        out["loadAverageAfter"] = [round(x, 2) for x in os.getloadavg()]
        print(
            f"{args.atoms} atoms, {out['searchesPerArm']} searches per arm: statistics counted "
            f"p50/p95 {out['counted']['p50Ms']}/{out['counted']['p95Ms']} ms "
            f"({out['counted']['reads']:.0f} reads); kept "
            f"{out['kept']['p50Ms']}/{out['kept']['p95Ms']} ms ({out['kept']['reads']:.0f} "
            f"reads); ratio p50 {out['ratioP50']}, p95 {out['ratioP95']}"
        )
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=1))
    finally:
        db.close()
        neo.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
