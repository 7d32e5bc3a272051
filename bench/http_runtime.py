"""Benchmark: the serving process's CPU per request on uvloop + httptools against
asyncio + h11 (``GRAPHSVC_HTTP_RUNTIME``).

Run::

    .venv/bin/python bench/http_runtime.py [--rounds 3] [--health 3000] [--searches 600]
                                           [--clients 8] [--json PATH]

It starts the managed Neo4j (or uses ``GRAPHSVC_NEO4J_URI``), writes 300 short atoms
into one subject (``bench/load.py``'s), then for each round starts ``graphsvc serve``
once per runtime, in turn (uvloop first, then asyncio, so both see the same machine
and the same Neo4j), and sends ``--clients`` keep-alive clients' worth of
``{ health }`` queries and then of searches (``bench/load.py``'s query). A third of
each count is sent untimed first. Per runtime and request kind it reports the
serving process's CPU milliseconds per request (``/proc``, children included),
requests/s and p50/p95 over HTTP, and the ratio asyncio / uvloop of the CPU per
request over all rounds but the first (warm-up), which is the figure the setting was
chosen on. Writes ``bench/results/http_runtime.json``.

The CPU per request is the figure to read: the clients run on the same cores, so
requests/s and latency also move with them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import signal
import statistics
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import BenchNeo4j  # noqa: E402
from bench.load import (  # noqa: E402
    SEARCH,
    WORDS,
    free_port,
    seed_atoms,
    serve_env,
    start_server,
    tree_cpu_s,
)
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

RUNTIMES = ("uvloop", "asyncio")


async def drive(url: str, token: str, kind: str, n: int, clients: int) -> list[float]:
    """``n`` requests of ``kind`` from ``clients`` keep-alive clients; latencies (s)."""
    rng = random.Random(n)
    latencies: list[float] = []
    sent = 0
    headers = {"Authorization": f"Bearer {token}"}

    async def client(c: httpx.AsyncClient) -> None:
        nonlocal sent
        while sent < n:
            sent += 1
            body: dict[str, Any] = {"query": "{ health }"}
            if kind == "search":
                body = {"query": SEARCH, "variables": {"q": " ".join(rng.sample(WORDS, 6))}}
            t0 = time.perf_counter()
            r = await c.post(f"{url}/graphql", json=body)
            latencies.append(time.perf_counter() - t0)
            if r.status_code != 200 or "errors" in r.json():
                raise RuntimeError(f"{kind}: {r.status_code} {r.text[:200]}")

    async with httpx.AsyncClient(headers=headers, timeout=60) as c:
        await asyncio.gather(*(client(c) for _ in range(clients)))
    return latencies


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--health", type=int, default=3000)
    p.add_argument("--searches", type=int, default=600)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "http_runtime.json"))
    args = p.parse_args()
    if args.rounds < 2:
        p.error("--rounds must be at least 2 (the first is warm-up)")

    neo = BenchNeo4j("http-runtime")
    state = neo.state
    settings = neo.settings.with_(
        secret_file=str(state / "server-secret"), key_file=str(state / "signing-key.json")
    )
    db = neo.database()
    rows: list[dict[str, Any]] = []
    try:
        db.apply_schema()
        service = service_for(settings, db, get_embedder(), get_tokenizer())
        subject = f"bench-http-{uuid.uuid4().hex[:8]}"
        seed_atoms(service, Binding(subject, "default", "human", "bench"), 300, random.Random(7))
        token = uuid.uuid4().hex
        auth = state / "auth.json"
        grant = {"subject": subject, "actor": {"kind": "human", "id": "bench"}}
        auth.write_text(json.dumps({"tokens": {token: grant}}))
        for rnd in range(args.rounds):
            for runtime in RUNTIMES:
                port = free_port()
                env = {**serve_env(settings, state, auth), "GRAPHSVC_HTTP_RUNTIME": runtime}
                proc = start_server(env, port, 1)
                url = f"http://127.0.0.1:{port}"
                try:
                    for kind, n in (("health", args.health), ("search", args.searches)):
                        asyncio.run(drive(url, token, kind, n // 3, args.clients))
                        cpu0, t0 = tree_cpu_s(proc.pid), time.perf_counter()
                        lat = sorted(asyncio.run(drive(url, token, kind, n, args.clients)))
                        wall, cpu = time.perf_counter() - t0, tree_cpu_s(proc.pid) - cpu0
                        row = {
                            "round": rnd,
                            "runtime": runtime,
                            "kind": kind,
                            "requests": n,
                            "serveCpuMsPerRequest": round(cpu / n * 1000, 3),
                            "requestsPerSecond": round(n / wall, 1),
                            "p50Ms": round(lat[len(lat) // 2] * 1000, 2),
                            "p95Ms": round(lat[int(len(lat) * 0.95)] * 1000, 2),
                        }
                        rows.append(row)
                        print(
                            f"round {rnd} {runtime:8s} {kind:7s} serve CPU "
                            f"{row['serveCpuMsPerRequest']:7.3f} ms/request, "
                            f"{row['requestsPerSecond']:6.1f} req/s, "
                            f"p50/p95 {row['p50Ms']}/{row['p95Ms']} ms",
                            flush=True,
                        )
                finally:
                    proc.send_signal(signal.SIGINT)
                    try:
                        proc.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        proc.kill()
    finally:
        db.close()

    summary: dict[str, Any] = {}
    for kind in ("health", "search"):
        cpu = {
            rt: statistics.mean(
                r["serveCpuMsPerRequest"]
                for r in rows
                if r["runtime"] == rt and r["kind"] == kind and r["round"] > 0
            )
            for rt in RUNTIMES
        }
        summary[kind] = {
            "serveCpuMsPerRequest": {rt: round(v, 3) for rt, v in cpu.items()},
            "ratioAsyncioOverUvloop": round(cpu["asyncio"] / cpu["uvloop"], 3),
        }
        print(
            f"{kind}: serve CPU per request uvloop {cpu['uvloop']:.3f} ms, asyncio "
            f"{cpu['asyncio']:.3f} ms (rounds 1..{args.rounds - 1}); "
            f"ratio asyncio / uvloop {cpu['asyncio'] / cpu['uvloop']:.2f}"
        )
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "benchmark": "http_runtime",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "args": vars(args),
        "rows": rows,
        "summary": summary,
    }
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
