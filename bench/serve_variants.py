"""Benchmark: the serving process's CPU per request and `{ health }` under load, for
variants of its settings (by default uvloop + httptools against asyncio + h11).

Run::

    .venv/bin/python bench/serve_variants.py [--variants "K=V,K=V;K=V"] [--rounds 3]
                                             [--health 3000] [--searches 600]
                                             [--clients 8] [--json PATH]

It starts the managed Neo4j (or uses ``GRAPHSVC_NEO4J_URI``), writes 300 short atoms
into one subject (``bench/load.py``'s), then for each round starts ``graphsvc serve``
once per variant, in turn (so all see the same machine and the same Neo4j; a variant
is a comma-separated list of ``GRAPHSVC_*`` assignments, variants are separated by
``;``, the first is the baseline), and sends ``--clients`` keep-alive clients' worth
of ``{ health }`` queries and then of searches (``bench/load.py``'s query). A third of
each count is sent untimed first. While the searches run, a prober on a connection
of its own asks ``{ health }`` every 50 ms. Per variant and request kind it reports
the serving process's CPU milliseconds per request (``/proc``, children included),
requests/s and p50/p95 over HTTP, the prober's p50/p95, and, over all rounds but the
first (warm-up), the ratio of each variant's CPU per request and prober p95 to the
baseline's. Writes ``bench/results/serve_variants.json``.

The CPU per request is the figure to read for cost: the clients run on the same
cores, so requests/s and latency also move with them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import BenchNeo4j, env_variants  # noqa: E402
from bench.load import (  # noqa: E402
    SEARCH,
    WORDS,
    free_port,
    seed_atoms,
    serve_env,
    start_server,
    stop_server,
    tree_cpu_s,
)
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

DEFAULT_VARIANTS = "GRAPHSVC_HTTP_RUNTIME=uvloop;GRAPHSVC_HTTP_RUNTIME=asyncio"


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


async def probe(url: str, stop: asyncio.Event) -> list[float]:
    """``{ health }`` every 50 ms on a connection of its own until ``stop``."""
    latencies: list[float] = []
    async with httpx.AsyncClient(timeout=60) as c:
        while not stop.is_set():
            t0 = time.perf_counter()
            r = await c.post(f"{url}/graphql", json={"query": "{ health }"})
            latencies.append(time.perf_counter() - t0)
            if r.status_code != 200:
                raise RuntimeError(f"health: {r.status_code}")
            await asyncio.sleep(0.05)
    return latencies


async def drive_probed(
    url: str, token: str, kind: str, n: int, clients: int
) -> tuple[list[float], list[float]]:
    """:func:`drive` with :func:`probe` beside it: (the load's, the probe's latencies)."""
    stop = asyncio.Event()
    prober = asyncio.create_task(probe(url, stop))
    try:
        load = await drive(url, token, kind, n, clients)
    finally:
        stop.set()
    return load, await prober


def pcts(values: list[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    ordered = sorted(values)
    return (
        round(ordered[len(ordered) // 2] * 1000, 2),
        round(ordered[int(len(ordered) * 0.95)] * 1000, 2),
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variants", default=DEFAULT_VARIANTS)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--health", type=int, default=3000)
    p.add_argument("--searches", type=int, default=600)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "serve_variants.json"))
    args = p.parse_args()
    if args.rounds < 2:
        p.error("--rounds must be at least 2 (the first is warm-up)")
    try:
        variants = dict(env_variants(args.variants))
    except ValueError as exc:
        p.error(f"--variants: {exc}")

    neo = BenchNeo4j("serve-variants")
    state = neo.state
    settings = neo.settings.with_(
        secret_file=str(state / "server-secret"), key_file=str(state / "signing-key.json")
    )
    db = neo.database()
    rows: list[dict[str, Any]] = []
    try:
        db.apply_schema()
        service = service_for(settings, db, get_embedder(), get_tokenizer())
        subject = f"bench-variants-{uuid.uuid4().hex[:8]}"
        seed_atoms(service, Binding(subject, "default", "human", "bench"), 300, random.Random(7))
        token = uuid.uuid4().hex
        auth = state / "auth.json"
        grant = {"subject": subject, "actor": {"kind": "human", "id": "bench"}}
        auth.write_text(json.dumps({"tokens": {token: grant}}))
        for rnd in range(args.rounds):
            for variant, assigned in variants.items():
                port = free_port()
                env = {**serve_env(settings, state, auth), **assigned}
                proc = start_server(env, port, 1)
                url = f"http://127.0.0.1:{port}"
                try:
                    for kind, n in (("health", args.health), ("search", args.searches)):
                        asyncio.run(drive(url, token, kind, n // 3, args.clients))
                        cpu0, t0 = tree_cpu_s(proc.pid), time.perf_counter()
                        lat, probed = asyncio.run(drive_probed(url, token, kind, n, args.clients))
                        wall, cpu = time.perf_counter() - t0, tree_cpu_s(proc.pid) - cpu0
                        p50, p95 = pcts(lat)
                        probe50, probe95 = pcts(probed)
                        row = {
                            "round": rnd,
                            "variant": variant,
                            "kind": kind,
                            "requests": n,
                            "serveCpuMsPerRequest": round(cpu / n * 1000, 3),
                            "requestsPerSecond": round(n / wall, 1),
                            "p50Ms": p50,
                            "p95Ms": p95,
                            "healthProbeP50Ms": probe50,
                            "healthProbeP95Ms": probe95,
                        }
                        rows.append(row)
                        print(
                            f"round {rnd} [{variant}] {kind:7s} serve CPU "
                            f"{row['serveCpuMsPerRequest']:7.3f} ms/request, "
                            f"{row['requestsPerSecond']:6.1f} req/s, p50/p95 {p50}/{p95} ms; "
                            f"{{ health }} beside it p50/p95 {probe50}/{probe95} ms",
                            flush=True,
                        )
                finally:
                    stop_server(proc)
    finally:
        db.close()

    summary: dict[str, Any] = {}
    base = next(iter(variants))
    for kind in ("health", "search"):

        def mean_of(variant: str, key: str, kind: str = kind) -> float:
            return statistics.mean(
                r[key]
                for r in rows
                if r["variant"] == variant and r["kind"] == kind and r["round"] > 0
            )

        summary[kind] = {}
        for variant in variants:
            cpu, probe95 = (
                mean_of(variant, "serveCpuMsPerRequest"),
                mean_of(variant, "healthProbeP95Ms"),
            )
            summary[kind][variant] = {
                "serveCpuMsPerRequest": round(cpu, 3),
                "healthProbeP95Ms": round(probe95, 2),
                "cpuRatioToBaseline": round(cpu / mean_of(base, "serveCpuMsPerRequest"), 3),
                "probeP95RatioToBaseline": round(probe95 / mean_of(base, "healthProbeP95Ms"), 3),
            }
            print(
                f"{kind}: [{variant}] serve CPU per request {cpu:.3f} ms, {{ health }} "
                f"beside it p95 {probe95:.1f} ms (rounds 1..{args.rounds - 1}); "
                f"against [{base}]: CPU x{summary[kind][variant]['cpuRatioToBaseline']}, "
                f"p95 x{summary[kind][variant]['probeP95RatioToBaseline']}"
            )
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "benchmark": "serve_variants",
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
