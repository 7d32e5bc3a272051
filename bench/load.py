"""Benchmark: a live ``graphsvc serve`` under concurrent clients on 127.0.0.1.

Run::

    .venv/bin/python bench/load.py [--clients 16] [--seconds 30] [--workers 16]
                                   [--processes 1,2] [--http-runtimes uvloop,asyncio]
                                   [--client raw,httpx] [--variants "K=V;K=V"]
                                   [--write-elsewhere]
                                   [--atoms 300]
                                   [--mix 20,60,10,10[;100,0,0,0...]] [--warmup 15]
                                   [--sample S] [--top-queries N] [--stages] [--py-spy N]
                                   [--json PATH]

It starts the managed Neo4j (or uses ``GRAPHSVC_NEO4J_URI``), writes ``--atoms``
short atoms into one subject, then for each ``--processes`` value, each
``--workers`` value, each ``--http-runtimes`` value, each ``--variants`` variant
(comma-separated ``GRAPHSVC_*`` assignments; variants separated by ``;``) and each
``--client`` starts ``graphsvc serve --workers P`` (P serving processes) as a
subprocess with ``GRAPHSVC_WORKER_THREADS`` set to the thread count,
``GRAPHSVC_HTTP_RUNTIME`` to the runtime and the variant's settings, and runs
``--clients`` concurrent closed-loop clients for ``--seconds``, each on its own
keep-alive connection (``raw``: :mod:`bench.raw_http`, a fraction of httpx's CPU per
request on the cores the server shares) or all through one httpx pool
(``httpx``): each request is a ``read``
(budget 1,000), a ``search``, a one-hop ``inspect`` of a seeded atom or a one-atom
``write`` in the ``--mix`` proportions (percent, in that order), with seeded query
texts (with ``--write-elsewhere`` the writes go to a second subject, so the
searched one keeps its size through a soak), after ``--warmup`` untimed seconds of
the same load on that server (a cold Neo4j JVM is several times slower). Meanwhile
one prober asks
``GET /healthz`` and the GraphQL ``{ health }`` field every 100 ms.

It prints, per configuration: throughput, p50/p95/p99 per operation, errors by code
(HTTP status for non-GraphQL failures) and the probes' latency under load next to
their idle latency measured on the same server before the load (the baseline of the
ratio), and writes ``bench/results/load.json``. The first configuration is the
baseline of the throughput ratio. Clients and server share the machine (and Neo4j);
the load average is recorded. With ``--sample S`` (a soak) it also prints, every S
seconds of the timed run, the requests/s of that interval and the resident memory of
the serving processes (with their children) and of the managed Neo4j. The JSON's
``queryTimes`` (and ``--top-queries N`` on stdout) breaks the timed run down by named
Cypher query and the embedder, from the server's ``/metrics``: calls and
milliseconds per request, waits included. Several ``--mix`` values (separated by
``;``) run in turn, each a configuration (``100,0,0,0``: reads alone, for Neo4j's and
the server's CPU per read). ``--stages`` serves with ``GRAPHSVC_STAGE_TIMER=on`` and
prints the serving process's CPU per request by operation and stage
(:mod:`graphsvc.telemetry.stages`; ``stageCpuMsPerRequest`` in the JSON);
``--py-spy N`` samples the serving processes with py-spy during each timed run and
prints the busy samples by library and the N functions with the most own samples
(``pySpy``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import BenchNeo4j, env_variants  # noqa: E402
from bench.raw_http import RawConnection, RawHTTPError  # noqa: E402
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.inputs.models import parse_changes  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.service import Service  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

WORDS = [
    "light",
    "leaf",
    "root",
    "water",
    "carbon",
    "energy",
    "cell",
    "sugar",
    "oxygen",
    "soil",
    "seed",
    "flower",
    "stem",
    "sun",
    "green",
    "plant",
    "growth",
    "river",
    "stone",
    "cloud",
    "wind",
    "heat",
    "cold",
    "salt",
    "mineral",
    "protein",
]
READ = (
    "query($q: String!) { read(query: $q, memoryTokenBudget: 1000) "
    "{ selection { tokens } items { score } } }"
)
SEARCH = "query($q: String!) { search(query: $q) { hits { score atom { atomId } } } }"
INSPECT = "query($a: ID!) { inspect(atomId: $a, limit: 10) { atom { atomId } } }"
WRITE = "mutation($c: [ChangeInput!]!) { write(changes: $c) { operationId } }"


def sentence(rng: random.Random, n: int = 8) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def seed_atoms(service: Service, binding: Binding, n: int, rng: random.Random) -> list[str]:
    ids: list[str] = []
    for start in range(0, n, 50):
        changes = [
            {
                "id": f"c{i}",
                "op": "CREATE",
                "content": {"text": sentence(rng), "links": []},
                "sources": [],
            }
            for i in range(start, min(n, start + 50))
        ]
        result = service.write(binding, parse_changes(changes))
        ids.extend(view.atom_id for view in result.changes.values())
    return ids


def serve_env(settings: Any, state: Path, auth: Path) -> dict[str, str]:
    """The environment of a ``graphsvc serve`` on ``settings``' Neo4j, keys and state."""
    return {
        **os.environ,
        "GRAPHSVC_NEO4J_URI": settings.neo4j.uri,
        "GRAPHSVC_STATE_DIR": str(state),
        "GRAPHSVC_SECRET_FILE": settings.paths.secret_file,
        "GRAPHSVC_KEY_FILE": settings.paths.key_file,
        "GRAPHSVC_AUTH_FILE": str(auth),
        "GRAPHSVC_LOG_LEVEL": "WARNING",
    }


def start_server(
    env: dict[str, str], port: int, processes: int, log: Path | None = None
) -> subprocess.Popen[bytes]:
    """``graphsvc serve`` on ``port``, ready; its output (warnings and errors, as
    :func:`serve_env` sets the level) goes to ``log`` when given."""
    cmd = [sys.executable, "-m", "graphsvc", "serve", "--port", str(port)]
    with contextlib.ExitStack() as stack:
        out = subprocess.DEVNULL if log is None else stack.enter_context(log.open("ab"))
        # The child holds its own copy of the log's descriptor.
        proc = subprocess.Popen(
            [*cmd, "--workers", str(processes)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"graphsvc serve exited with {proc.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    proc.kill()
    raise RuntimeError("graphsvc serve did not become ready")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """Stop a :func:`start_server` process as Ctrl-C would (killed after 30 s)."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


async def probe_once(client: httpx.AsyncClient) -> tuple[float, float]:
    t0 = time.perf_counter()
    await client.get("/healthz")
    t1 = time.perf_counter()
    await client.post("/graphql", json={"query": "{ health }"})
    return t1 - t0, time.perf_counter() - t1


_METRIC_SERIES = (
    "graphsvc_neo4j_query_duration_seconds_sum",
    "graphsvc_neo4j_query_duration_seconds_count",
    "graphsvc_embedding_duration_seconds_sum",
    "graphsvc_embedding_duration_seconds_count",
)


async def scrape_times(client: httpx.AsyncClient) -> dict[tuple[str, str], float]:
    """The serving process's summed query and embedding times, by series and label.

    With several serving processes ``/metrics`` answers from whichever took the
    connection, so the breakdown is one process's share.
    """
    r = await client.get("/metrics")
    out: dict[tuple[str, str], float] = {}
    for line in r.text.splitlines():
        series = line.split("{", 1)[0].split(" ", 1)[0]
        if series not in _METRIC_SERIES:
            continue
        label = line.split('query="', 1)[1].split('"', 1)[0] if 'query="' in line else "embed"
        out[(series, label)] = float(line.rsplit(" ", 1)[1])
    return out


def time_breakdown(
    before: dict[tuple[str, str], float], after: dict[tuple[str, str], float], requests: int
) -> list[dict[str, Any]]:
    """Per named query (and the embedder): calls and milliseconds per ok request."""
    rows: dict[str, dict[str, float]] = defaultdict(lambda: {"calls": 0.0, "ms": 0.0})
    for (series, label), value in after.items():
        delta = value - before.get((series, label), 0.0)
        key = "calls" if series.endswith("_count") else "ms"
        rows[label][key] += delta if key == "calls" else 1000 * delta
    per = max(requests, 1)
    table = [
        {
            "query": label,
            "callsPerRequest": round(v["calls"] / per, 3),
            "msPerRequest": round(v["ms"] / per, 2),
            "msPerCall": round(v["ms"] / v["calls"], 2) if v["calls"] else None,
        }
        for label, v in rows.items()
        if v["calls"] > 0
    ]
    return sorted(table, key=lambda row: -row["msPerRequest"])


async def scrape_stages(client: httpx.AsyncClient) -> dict[tuple[str, str], float]:
    """The stage timer's totals (``GRAPHSVC_STAGE_TIMER=on``): CPU seconds by
    (operation, stage) and requests by (operation, ``requests``)."""
    r = await client.get("/metrics")
    out: dict[tuple[str, str], float] = {}
    for line in r.text.splitlines():
        if not line.startswith(
            ("graphsvc_stage_cpu_seconds_total{", "graphsvc_stage_requests_total{")
        ):
            continue
        labels = dict(
            part.split("=", 1) for part in line.split("{", 1)[1].split("}", 1)[0].split(",")
        )
        op = labels["operation"].strip('"')
        name = labels.get("stage", '"requests"').strip('"')
        out[(op, name)] = float(line.rsplit(" ", 1)[1])
    return out


def stage_table(
    before: dict[tuple[str, str], float], after: dict[tuple[str, str], float]
) -> dict[str, dict[str, float]]:
    """CPU milliseconds per request by operation and stage over the timed run."""
    delta = {key: value - before.get(key, 0.0) for key, value in after.items()}
    table: dict[str, dict[str, float]] = {}
    for (op, name), value in sorted(delta.items()):
        requests = delta.get((op, "requests"), 0.0)
        if name == "requests" or requests <= 0:
            continue
        table.setdefault(op, {})[name] = round(1000 * value / requests, 2)
    return table


async def run_load(
    url: str,
    token: str,
    args: argparse.Namespace,
    seconds: float,
    atoms: list[str],
    client_kind: str,
) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=args.clients + 4)
    headers = {"Authorization": f"Bearer {token}"}
    write_headers = {"Authorization": f"Bearer {args.write_token}"} if args.write_token else None
    async with httpx.AsyncClient(
        base_url=url, headers=headers, timeout=60, limits=limits
    ) as client:
        idle = [await probe_once(client) for _ in range(20)]
        latencies: dict[str, list[float]] = defaultdict(list)
        done_at: list[float] = []  # monotonic completion time of every ok request
        samples: list[dict[str, Any]] = []
        errors: Counter[str] = Counter()
        probes: list[tuple[float, float]] = []
        stop_at = time.monotonic() + seconds
        ops = ["read", "search", "inspect", "write"]

        async def one_client(k: int) -> None:
            rng = random.Random(args.seed * 1000 + k)
            conn = wconn = None
            if client_kind == "raw":
                port = int(url.rsplit(":", 1)[1])
                conn = RawConnection("127.0.0.1", port, headers)
                # Writes elsewhere go on a connection of their own, with their token.
                wconn = RawConnection("127.0.0.1", port, write_headers) if write_headers else conn
            while time.monotonic() < stop_at:
                op = rng.choices(ops, args.mix)[0]
                if op == "inspect":
                    body = {"query": INSPECT, "variables": {"a": rng.choice(atoms)}}
                elif op == "write":
                    change = {
                        "id": "a",
                        "op": "CREATE",
                        "content": {"text": sentence(rng), "links": []},
                        "sources": [],
                    }
                    body = {"query": WRITE, "variables": {"c": [change]}}
                else:
                    q = " ".join(rng.sample(WORDS, 3))
                    body = {"query": READ if op == "read" else SEARCH, "variables": {"q": q}}
                t0 = time.perf_counter()
                try:
                    if conn is not None and wconn is not None:
                        via = wconn if op == "write" else conn
                        raw = await via.post("/graphql", json.dumps(body).encode())
                        status, ctype, content = raw.status, raw.content_type, raw.body
                    else:
                        extra = write_headers if op == "write" and write_headers else None
                        r = await client.post("/graphql", json=body, headers=extra)
                        status, content = r.status_code, r.content
                        ctype = r.headers.get("content-type", "")
                    took = time.perf_counter() - t0
                    payload = json.loads(content) if ctype.startswith("application/json") else {}
                    errs = payload.get("errors") or []
                    if errs:
                        errors[f"{op}:{errs[0].get('extensions', {}).get('code')}"] += 1
                    elif status != 200:
                        errors[f"{op}:HTTP {status}"] += 1
                    else:
                        latencies[op].append(took)
                        done_at.append(time.monotonic())
                except (httpx.HTTPError, OSError, EOFError, RawHTTPError) as exc:
                    # OSError: a reset or refused connection; EOFError: the raw
                    # client's IncompleteReadError (the server closed mid-answer).
                    errors[f"{op}:{type(exc).__name__}"] += 1
            if conn is not None and wconn is not None:
                conn.close()
                wconn.close()  # the same connection again without --write-elsewhere: a no-op

        async def prober() -> None:
            while time.monotonic() < stop_at:
                probes.append(await probe_once(client))
                await asyncio.sleep(0.1)

        async def sampler() -> None:
            # Resident memory of the serving processes and of Neo4j every interval.
            while time.monotonic() < stop_at:
                await asyncio.sleep(args.sample)
                samples.append(
                    {
                        "at": round(time.monotonic() - started, 1),
                        "serveRssMb": round(tree_rss_mb(args.serve_pid), 1),
                        "neo4jRssMb": round(tree_rss_mb(args.neo4j_pid), 1),
                    }
                )

        times0 = await scrape_times(client)
        stages0 = await scrape_stages(client)
        started = time.monotonic()
        cpu0 = (tree_cpu_s(args.serve_pid), tree_cpu_s(args.neo4j_pid), time.process_time())
        tasks = [prober(), *(one_client(k) for k in range(args.clients))]
        if args.sample > 0:
            tasks.append(sampler())
        await asyncio.gather(*tasks)
        elapsed = time.monotonic() - started
        cpu1 = (tree_cpu_s(args.serve_pid), tree_cpu_s(args.neo4j_pid), time.process_time())
        times1 = await scrape_times(client)
        stages1 = await scrape_stages(client)
    ok = sum(len(v) for v in latencies.values())
    # Where the two cores went: CPU seconds of the serving processes, of Neo4j and of
    # these clients, per ok request.
    cpu = {
        name: round(1000 * (b - a) / max(ok, 1), 1)
        for name, a, b in zip(("serve", "neo4j", "clients"), cpu0, cpu1, strict=True)
    }
    return {
        "seconds": round(elapsed, 1),
        "okRequests": ok,
        "throughputPerSecond": round(ok / elapsed, 1),
        "operations": {
            op: {
                "count": len(v),
                "p50Ms": pct(v, 0.5),
                "p95Ms": pct(v, 0.95),
                "p99Ms": pct(v, 0.99),
            }
            for op, v in sorted(latencies.items())
        },
        "errors": dict(errors),
        "cpuMsPerRequest": cpu,
        # Wall time inside each named query (waits for Neo4j included), per request.
        "queryTimes": time_breakdown(times0, times1, ok),
        # Serve CPU per request by operation and stage (--stages), this process's share.
        "stageCpuMsPerRequest": stage_table(stages0, stages1),
        "healthz": {
            "idleP50Ms": pct([a for a, _ in idle], 0.5),
            "loadP50Ms": pct([a for a, _ in probes], 0.5),
            "loadP95Ms": pct([a for a, _ in probes], 0.95),
        },
        "graphqlHealth": {
            "idleP50Ms": pct([b for _, b in idle], 0.5),
            "loadP50Ms": pct([b for _, b in probes], 0.5),
            "loadP95Ms": pct([b for _, b in probes], 0.95),
        },
        "loadAverage": [round(x, 2) for x in os.getloadavg()],
        "timeline": timeline(done_at, samples, started, args.sample),
    }


def start_py_spy(pid: int, seconds: float, path: Path) -> subprocess.Popen[bytes] | None:
    """py-spy sampling ``pid`` and its children for ``seconds`` (raw collapsed stacks
    to ``path``, without pausing them), or None when py-spy is not installed."""
    exe = Path(sys.executable).with_name("py-spy")
    if not exe.is_file():
        print("--py-spy: py-spy is not installed (pip install py-spy)", file=sys.stderr)
        return None
    # --gil: only samples of a thread that holds the GIL (Python running, not waiting);
    # native work that releases it (onnxruntime) is in the stage timer's figures.
    cmd = [str(exe), "record", "--pid", str(pid), "--subprocesses", "--nonblocking", "--gil"]
    cmd += ["--format", "raw", "--rate", "200", "--duration", str(int(seconds))]
    return subprocess.Popen(
        [*cmd, "--output", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def _frame_name(frame: str) -> str:
    """``func (path/to/module.py:12)`` as ``path/to/module.py:func``."""
    func, _, where = frame.partition(" (")
    return f"{where.rsplit(':', 1)[0]}:{func}"


def _library(frame: str) -> str:
    """The package of a frame (``graphsvc.ops``, ``neo4j``, ``threading``)."""
    parts = frame.partition(" (")[2].rsplit(":", 1)[0].removesuffix(".py").split("/")
    return ".".join(parts[:2]) if parts[0] == "graphsvc" and len(parts) > 2 else parts[0]


def py_spy_summary(path: Path, top: int) -> dict[str, Any]:
    """Samples holding the GIL: their share by the package of the innermost frame,
    the ``top`` functions by own samples and the ``top`` graphsvc functions by
    samples under them (a profile summary per configuration)."""
    own: Counter[str] = Counter()
    under: Counter[str] = Counter()
    libraries: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines() if path.is_file() else []:
        stack, _, count = line.rpartition(" ")
        if not count.isdigit() or not stack:
            continue
        frames = stack.split(";")[1:]  # the first names the process
        if not frames:
            continue
        n = int(count)
        own[_frame_name(frames[-1])] += n
        libraries[_library(frames[-1])] += n
        for name in {_frame_name(f) for f in frames if " (graphsvc/" in f}:
            under[name] += n
        total += n
    share = max(total, 1)
    return {
        "samples": total,
        "byPackage": {k: round(v / share, 3) for k, v in libraries.most_common(12)},
        "topOwn": {k: round(v / share, 3) for k, v in own.most_common(top)},
        "topGraphsvc": {k: round(v / share, 3) for k, v in under.most_common(top)},
    }


def tree_rss_mb(pid: int | None) -> float:
    """Resident memory of ``pid`` and its descendants (MB; 0 when unknown)."""
    if pid is None:
        return 0.0
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            total += next(
                int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS")
            )
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, StopIteration, ValueError):
            continue
    return total / 1024


def tree_cpu_s(pid: int | None) -> float:
    """User + system CPU seconds of ``pid`` and its descendants (0 when unknown)."""
    if pid is None:
        return 0.0
    total, todo = 0.0, [pid]
    tick = os.sysconf("SC_CLK_TCK")
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError, IndexError):
            continue
    return total


def timeline(
    done_at: list[float], samples: list[dict[str, Any]], started: float, every: float
) -> list[dict[str, Any]]:
    """Per sampling interval: requests/s and the memory sampled at its end."""
    out = []
    for s in samples:
        lo = s["at"] - every
        n = sum(1 for t in done_at if lo <= t - started < s["at"])
        out.append({**s, "requestsPerSecond": round(n / every, 1)})
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--workers", default="16", help="GRAPHSVC_WORKER_THREADS values")
    p.add_argument("--processes", default="1,2", help="graphsvc serve --workers values")
    p.add_argument(
        "--http-runtimes",
        default="auto",
        help="GRAPHSVC_HTTP_RUNTIME values (auto, uvloop, asyncio): event loop and HTTP parser",
    )
    p.add_argument(
        "--client",
        default="raw",
        help="load clients (raw: one bench/raw_http connection each; httpx: one shared "
        "AsyncClient pool); a comma-separated list runs each",
    )
    p.add_argument(
        "--variants",
        default="",
        help='serving settings to compare, "GRAPHSVC_K=V,GRAPHSVC_K=V;GRAPHSVC_K=V"',
    )
    p.add_argument(
        "--write-elsewhere",
        action="store_true",
        help="send the writes to a second subject: the searched one keeps its size",
    )
    p.add_argument("--warmup", type=float, default=15.0, help="untimed seconds per server")
    p.add_argument("--atoms", type=int, default=300)
    p.add_argument(
        "--mix",
        default="20,60,10,10",
        help="read,search,inspect,write percentages; several mixes separated by ; run in turn",
    )
    p.add_argument(
        "--py-spy",
        type=int,
        default=0,
        metavar="N",
        help="sample the serving processes with py-spy during each timed run and print "
        "the busy samples by library and the N functions with the most own samples",
    )
    p.add_argument(
        "--stages",
        action="store_true",
        help="serve with GRAPHSVC_STAGE_TIMER=on and print CPU per request by operation and stage",
    )
    p.add_argument("--seed", type=int, default=7)
    p.add_argument(
        "--sample",
        type=float,
        default=0.0,
        help="a soak: every SAMPLE seconds, requests/s and the serving processes' and "
        "Neo4j's resident memory (0: off)",
    )
    p.add_argument(
        "--top-queries",
        type=int,
        default=0,
        help="print the N named queries (and the embedder) that took the most time per request",
    )
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "load.json"))
    args = p.parse_args()
    args.serve_pid, args.neo4j_pid = None, None
    mixes = [[int(x) for x in mix.split(",")] for mix in args.mix.split(";")]
    if any(len(mix) != 4 or min(mix) < 0 or sum(mix) == 0 for mix in mixes):
        p.error("--mix is four non-negative percentages: read,search,inspect,write")
    if not 1 <= args.clients <= 256 or not 0 < args.seconds <= 600:
        p.error("--clients must be in 1..256 and --seconds in (0, 600]")
    runtimes = args.http_runtimes.split(",")
    kinds = args.client.split(",")
    if not set(kinds) <= {"raw", "httpx"}:
        p.error("--client takes raw, httpx or both")
    variants: list[tuple[str, dict[str, str]]] = [("", {})]
    if args.variants:
        try:
            variants = env_variants(args.variants)
        except ValueError as exc:
            p.error(f"--variants: {exc}")
    configs = [
        (int(procs), int(threads), runtime, variant, kind, mix)
        for mix in mixes
        for procs in args.processes.split(",")
        for threads in args.workers.split(",")
        for runtime in runtimes
        for variant in variants
        for kind in kinds
    ]

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    neo = BenchNeo4j("load")
    state = neo.state
    settings = neo.settings.with_(
        secret_file=str(state / "server-secret"), key_file=str(state / "signing-key.json")
    )
    db = neo.database()
    results: dict[str, Any] = {}
    try:
        db.apply_schema()
        service = service_for(settings, db, get_embedder(), get_tokenizer())
        subject = f"bench-load-{uuid.uuid4().hex[:8]}"
        binding = Binding(subject, "default", "human", "bench")
        print(f"writing {args.atoms} atoms into {subject}...", file=sys.stderr, flush=True)
        atoms = seed_atoms(service, binding, args.atoms, random.Random(args.seed))
        token = uuid.uuid4().hex
        args.write_token = uuid.uuid4().hex if args.write_elsewhere else None
        tokens = {token: {"subject": subject, "actor": {"kind": "human", "id": "bench"}}}
        if args.write_token:
            tokens[args.write_token] = {
                "subject": f"{subject}-writes",
                "actor": {"kind": "human", "id": "bench"},
            }
        auth = state / "auth.json"
        auth.write_text(json.dumps({"tokens": tokens}))
        for procs, n, runtime, (variant, assigned), kind, mix in configs:
            args.mix = mix
            name = f"processes={procs} threads={n}"
            if len(mixes) > 1:
                name = f"mix={','.join(map(str, mix))} {name}"
            if len(runtimes) > 1:
                name += f" http={runtime}"
            if variant:
                name += f" {variant}"
            if len(kinds) > 1:
                name += f" client={kind}"
            if name in results:  # the same configuration again (alternating runs)
                name += f" #{sum(1 for done in results if done.startswith(name)) + 1}"
            port = free_port()
            env = {
                **serve_env(settings, state, auth),
                "GRAPHSVC_WORKER_THREADS": str(n),
                "GRAPHSVC_HTTP_RUNTIME": runtime,
                **({"GRAPHSVC_STAGE_TIMER": "on"} if args.stages else {}),
                **assigned,
            }
            log = Path(tempfile.gettempdir()) / f"graphsvc-load-serve-{port}.log"
            print(f"{name}: starting graphsvc serve (its log: {log})...", file=sys.stderr)
            proc = start_server(env, port, procs, log)
            args.serve_pid, args.neo4j_pid = proc.pid, neo.pid
            url = f"http://127.0.0.1:{port}"
            try:
                if args.warmup > 0:
                    # Untimed: the JVM compiles its hot paths, caches fill, per server.
                    asyncio.run(run_load(url, token, args, args.warmup, atoms, kind))
                spy_out = Path(tempfile.gettempdir()) / f"graphsvc-load-py-spy-{port}.txt"
                spy = start_py_spy(proc.pid, args.seconds, spy_out) if args.py_spy else None
                out = asyncio.run(run_load(url, token, args, args.seconds, atoms, kind))
                if spy is not None:
                    spy.wait(timeout=60)
                    out["pySpy"] = py_spy_summary(spy_out, args.py_spy)
            finally:
                stop_server(proc)
            results[name] = out
            for row in out["timeline"]:
                print(
                    f"  {row['at']:7.1f} s: {row['requestsPerSecond']:6.1f} req/s, "
                    f"serve {row['serveRssMb']:7.1f} MB, Neo4j {row['neo4jRssMb']:7.1f} MB",
                    flush=True,
                )
            ops = ", ".join(
                f"{op} p50/p95/p99 {v['p50Ms']}/{v['p95Ms']}/{v['p99Ms']} ms"
                for op, v in out["operations"].items()
            )
            for row in out["queryTimes"][: args.top_queries]:
                print(
                    f"  {row['query']:<32} {row['callsPerRequest']:6.2f} calls, "
                    f"{row['msPerRequest']:7.1f} ms per request ({row['msPerCall']} ms per call)",
                    flush=True,
                )
            for key, shares in out.get("pySpy", {}).items():
                print(f"  py-spy {key}: {shares}", flush=True)
            for op, row in out["stageCpuMsPerRequest"].items():
                cells = ", ".join(f"{k} {v}" for k, v in row.items())
                print(f"  {op:<8} serve CPU ms per request by stage: {cells}", flush=True)
            print(
                f"{name}: {out['throughputPerSecond']} req/s; {ops}; "
                f"errors {out['errors'] or 'none'}; CPU ms per request {out['cpuMsPerRequest']}; "
                f"/healthz p50 idle/load "
                f"{out['healthz']['idleP50Ms']}/{out['healthz']['loadP50Ms']} ms; "
                f"{{ health }} p50/p95 idle/load {out['graphqlHealth']['idleP50Ms']}/"
                f"{out['graphqlHealth']['loadP50Ms']}/{out['graphqlHealth']['loadP95Ms']} ms",
                flush=True,
            )
        first = next(iter(results))
        base = results[first]["throughputPerSecond"] or 1.0
        for name, out in list(results.items())[1:]:
            ratio = out["throughputPerSecond"] / base
            print(f"throughput ratio {name} / {first}: {ratio:.2f}")
        report = {
            "benchmark": "load",
            "args": {k: v for k, v in vars(args).items() if k != "json"},
            "configurations": list(results),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "results": results,
        }
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1))
    finally:
        db.close()
        neo.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
