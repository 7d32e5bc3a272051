"""Benchmark: the CPU one search costs, in graphsvc's process and in Neo4j's.

Run::

    .venv/bin/python bench/search_cost.py [--searches 120] [--warmup 200] [--json OUT]

Wall times on the shared 2-core machine move with whatever else runs; CPU time moves
far less, and throughput on two cores is bounded by it. The team corpus
(``seed/team.json``, 301 atoms, as ``graphsvc seed`` loads it) goes into a managed
Neo4j of this run; after ``--warmup`` untimed searches (the JVM compiles its hot
paths), ``--searches`` searches (``limit: 10``,
in process, the questions of ``bench/data/team_questions.json`` in turn) are timed:

- this process's CPU time (``time.process_time``: the evaluation, BM25, the solve,
  the driver, every thread of the process) per search;
- the Neo4j JVM's CPU time (``/proc/<pid>/stat``: user + system) per search;
- then each named query a search sent, run again alone with the parameters it was
  sent with (three times over): Neo4j's CPU per call and the calls per search.

``--arms`` names settings variants (``name=value`` pairs joined by ``;``, arms by
``,``; ``shipped`` is the defaults): each arm is its own service on the same data, and
the timed searches alternate between the arms in blocks of ten, so the machine's
load falls on every arm alike. The default compares the shipped settings with the
head mirror turned off (``head_mirror_max=0``: both candidate legs asked of Neo4j).

Writes ``bench/results/search_cost.json`` and prints one table per arm. Needs the
managed Neo4j (not ``GRAPHSVC_NEO4J_URI``): its process is what is measured.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import graphsvc.store.connection as connection  # noqa: E402
from bench.harness import BenchNeo4j  # noqa: E402
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.core.requests import SearchRequest  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.seed import load_team_corpus  # noqa: E402
from graphsvc.store.queries import query  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

QUESTIONS = ROOT / "bench" / "data" / "team_questions.json"


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Recorder:
    """Records every named query the store sends (name, parameters) while on."""

    def __init__(self) -> None:
        self.on = False
        self.calls: list[tuple[str, dict[str, Any]]] = []
        run, autocommit = connection.run, connection.Database._autocommit

        def recorded_run(tx: Any, name: str, **params: Any) -> list[dict[str, Any]]:
            if self.on:
                self.calls.append((name, params))
            return run(tx, name, **params)

        def recorded_autocommit(
            db: Any, name: str, params: dict[str, Any], routing: Any, *, plain: bool
        ) -> list[dict[str, Any]]:
            if self.on:
                self.calls.append((name, params))
            return autocommit(db, name, params, routing, plain=plain)

        # Modules imported `run` by name: rebind it wherever it was taken.
        for name, module in list(sys.modules.items()):
            if name.startswith("graphsvc.") and getattr(module, "run", None) is run:
                module.run = recorded_run  # type: ignore[attr-defined]
        connection.Database._autocommit = recorded_autocommit  # type: ignore[method-assign,assignment]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--searches", type=int, default=120)
    p.add_argument("--warmup", type=int, default=200, help="untimed searches first")
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "search_cost.json"))
    p.add_argument("--arms", default="shipped,head_mirror_max=0")
    args = p.parse_args(argv)
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    if os.environ.get("GRAPHSVC_NEO4J_URI"):
        p.error("unset GRAPHSVC_NEO4J_URI: the managed Neo4j's process is what is measured")
    recorder = Recorder()
    questions = [q["question"] for q in json.loads(QUESTIONS.read_text())["questions"]]
    neo = BenchNeo4j("search-cost")
    db = neo.database()
    try:
        assert neo.pid is not None
        db.apply_schema()
        services = {arm: _service(neo.settings, db, arm) for arm in arms}
        subject = f"team-{uuid.uuid4().hex[:8]}"
        load_team_corpus(services[arms[0]], subject=subject)
        db.driver.execute_query("CALL db.awaitIndexes(600)", database_=db.database)
        binding = Binding(subject, "default", "human", "bench")

        def search(arm: str, i: int) -> None:
            services[arm].search(binding, SearchRequest(questions[i % len(questions)], limit=10))

        for i in range(args.warmup):  # the JVM compiles its hot paths
            for arm in arms:
                search(arm, i)
        time.sleep(1.0)  # the last cursor saves commit before the clocks start
        spent = {arm: [0.0, 0.0, 0.0] for arm in arms}  # graphsvc, Neo4j, wall
        calls: dict[str, list[tuple[str, dict[str, Any]]]] = {arm: [] for arm in arms}
        block = 10
        for start in range(0, args.searches, block):
            for arm in arms:
                recorder.calls = calls[arm]
                recorder.on = True
                neo0, own0, wall0 = cpu_seconds(neo.pid), time.process_time(), time.perf_counter()
                for i in range(start, min(start + block, args.searches)):
                    search(arm, i)
                time.sleep(0.2)  # the cursor saves of the block commit
                neo1, own1, wall1 = cpu_seconds(neo.pid), time.process_time(), time.perf_counter()
                recorder.on = False
                spent[arm][0] += own1 - own0
                spent[arm][1] += neo1 - neo0
                spent[arm][2] += wall1 - wall0 - 0.2
        n = args.searches
        results = {
            arm: {
                "perSearch": {
                    "graphsvcCpuMs": round(1000 * spent[arm][0] / n, 2),
                    "neo4jCpuMs": round(1000 * spent[arm][1] / n, 2),
                    "wallMs": round(1000 * spent[arm][2] / n, 2),
                },
                "queries": _queries(db, neo.pid, calls[arm], n),
            }
            for arm in arms
        }
        report = {
            "benchmark": "search_cost",
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "searches": n,
            "corpusAtoms": 301,
            "loadAverage": [round(x, 2) for x in os.getloadavg()],
            "arms": results,
        }
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=1) + "\n")
        for arm, result in results.items():
            per = result["perSearch"]
            print(
                f"[{arm}] per search: graphsvc CPU {per['graphsvcCpuMs']} ms, Neo4j CPU "
                f"{per['neo4jCpuMs']} ms, wall {per['wallMs']} ms"
            )
            print(f"{'query':36s} {'calls/search':>12s} {'Neo4j CPU ms/call':>18s}")
            ranked = sorted(result["queries"].items(), key=lambda x: -x[1]["neo4jCpuMsPerCall"])
            for name, q in ranked:
                print(f"{name:36s} {q['callsPerSearch']:12.2f} {q['neo4jCpuMsPerCall']:18.2f}")
        first, *rest = arms
        for arm in rest:
            a, b = results[first]["perSearch"], results[arm]["perSearch"]
            total = (a["graphsvcCpuMs"] + a["neo4jCpuMs"]) / max(
                b["graphsvcCpuMs"] + b["neo4jCpuMs"], 1e-9
            )
            print(
                f"CPU per search, {first} / {arm}: x{total:.2f} (load {report['loadAverage'][0]})"
            )
        print(f"wrote {out}")
    finally:
        db.close()
        neo.close()
    return 0


def _service(settings: Any, db: Any, arm: str) -> Any:
    """A service with ``arm``'s settings (``shipped``: the defaults)."""
    changes: dict[str, Any] = {}
    if arm != "shipped":
        for part in filter(None, (p.strip() for p in arm.split(";"))):
            key, _, value = part.partition("=")
            changes[key.strip()] = value.strip()
    return service_for(settings.with_(**changes), db, get_embedder(), get_tokenizer())


def _queries(
    db: Any, pid: int, recorded: list[tuple[str, dict[str, Any]]], searches: int
) -> dict[str, dict[str, float]]:
    """Each named query the searches sent, run again alone (three times over): calls
    per search and Neo4j's CPU per call."""
    by_query: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for name, params in recorded:
        by_query[name].append(params)
    queries: dict[str, dict[str, float]] = {}
    for name, calls in sorted(by_query.items()):
        text = query(name)
        is_write = "save" in name or "record" in name or "delete" in name

        def again(params: dict[str, Any], text: str = text, write: bool = is_write) -> None:
            if "evalId" in params:  # a stored evaluation's key is unique
                params = {**params, "evalId": uuid.uuid4().hex}
            with db.driver.session(database=db.database) as s:
                run = s.execute_write if write else s.execute_read
                run(lambda tx: list(tx.run(text, params)))

        c0 = cpu_seconds(pid)
        for _ in range(3):
            for params in calls:
                again(params)
        queries[name] = {
            "callsPerSearch": round(len(calls) / searches, 2),
            "neo4jCpuMsPerCall": round(1000 * (cpu_seconds(pid) - c0) / (3 * len(calls)), 2),
        }
    return queries


if __name__ == "__main__":
    raise SystemExit(main())
