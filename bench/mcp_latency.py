"""Benchmark: ``search`` and ``read`` through MCP against the same calls over GraphQL.

Run::

    flock /work/.heavy.lock .venv/bin/python bench/mcp_latency.py [--rounds 200]
                                                                   [--json PATH]

One run, one Neo4j (managed, or ``GRAPHSVC_NEO4J_URI``), one Service with the demo
corpus (``graphsvc seed``: 325 atoms in subject ``demo``) served by a real uvicorn.
The same queries go, one at a time and interleaved call by call, to:

- **GraphQL**: ``POST /graphql`` with httpx on a kept-alive connection (the baseline);
- **MCP over HTTP**: ``/mcp`` of the same server, the SDK's streamable HTTP client;
- **MCP over stdio**: ``graphsvc mcp`` as a subprocess on the same database, the
  SDK's stdio client.

Each is timed at the client, end to end (``search`` limit 10; ``read`` budget 1,000
tokens). The GraphQL documents select what the MCP tools answer (the atom views,
scores and breakdowns, diagnostics and cursor of a search; the text, items,
selection, manifest id and cursor of a read). It prints p50/p95/mean per path and
the ratios to GraphQL, and writes ``bench/results/mcp_latency.json`` (or ``--json``)
with the load average before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from statistics import mean, quantiles
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import BenchNeo4j  # noqa: E402

QUERIES = [
    "why did the payments service page the on-call engineer",
    "how does water vapour become rain",
    "what did the retrospective decide about deploy freezes",
    "which runbook covers a full disk",
    "the SLO for checkout latency",
    "who owns the incident review",
    "clouds form when vapour cools",
    "database failover steps",
    "what changed in the alerting policy",
    "rollback of a bad release",
]
ATOM = (
    "atomId rev state text head links { role unavailable required at orderKey "
    "target { atomId rev } } sources atomOf atomisedInto archivedAt"
)
SEARCH = (
    "query($q: String!) { search(query: $q, limit: 10) { hits { atom { "
    + ATOM
    + " } score scoreBreakdown } diagnostics cursor } }"
)
READ = (
    "query($q: String!) { read(query: $q, memoryTokenBudget: 1000) { text formatVersion "
    "items { ref { atomId rev } role score blocked } selection { baselineComplete "
    "coverageCertified tokens budget } manifestInfo { id } cursor } }"
)


def _ms(values: list[float]) -> dict[str, float]:
    qs = quantiles(values, n=100)
    return {
        "p50": round(qs[49] * 1000, 2),
        "p95": round(qs[94] * 1000, 2),
        "mean": round(mean(values) * 1000, 2),
    }


class Loop:
    """An event loop on a thread holding one connected SDK client."""

    def __init__(self, connect: Callable[[], Any]) -> None:
        self.loop = asyncio.new_event_loop()
        started = threading.Event()
        self.client: Any = None
        self.stop: asyncio.Event | None = None

        async def hold() -> None:
            self.stop = asyncio.Event()
            async with connect() as client:
                self.client = client
                started.set()
                await self.stop.wait()

        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(hold(),))
        self.thread.start()
        if not started.wait(300):
            raise RuntimeError("MCP client did not connect")

    def run(self, fn: Callable[[Any], Awaitable[Any]]) -> Any:
        return asyncio.run_coroutine_threadsafe(fn(self.client), self.loop).result(300)

    def close(self) -> None:
        assert self.stop is not None
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200, help="calls per path and operation")
    parser.add_argument(
        "--json", type=Path, default=ROOT / "bench" / "results" / "mcp_latency.json"
    )
    args = parser.parse_args()

    import httpx2
    import uvicorn
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client

    from graphsvc.embed import get_embedder
    from graphsvc.http.app import create_app
    from graphsvc.keys.auth import AuthTable
    from graphsvc.runtime import service_for
    from graphsvc.seed import load_seed
    from graphsvc.tokenizer import get_tokenizer

    load_before = os.getloadavg()
    neo = BenchNeo4j("mcp")
    db = neo.database()
    db.apply_schema()
    service = service_for(neo.settings, db, get_embedder(), get_tokenizer())
    load_seed(service)
    token = uuid.uuid4().hex
    entry = {"subject": "demo", "policy": "default", "actor": {"kind": "agent", "id": "bench"}}
    auth_file = neo.state / "auth.json"
    auth_file.write_text(json.dumps({"tokens": {token: entry}}))
    auth_file.chmod(0o600)
    auth = AuthTable.from_file(auth_file)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(service, auth), host="127.0.0.1", port=port, log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {token}"}
    env = {
        **os.environ,
        "GRAPHSVC_NEO4J_URI": neo.settings.neo4j.uri,
        "GRAPHSVC_STATE_DIR": str(neo.state),
        "GRAPHSVC_AUTH_FILE": str(auth_file),
        "GRAPHSVC_MCP_TOKEN": token,
        "GRAPHSVC_LOG_LEVEL": "WARNING",
    }
    gql = httpx.Client(base_url=url, headers=headers, timeout=120)
    http_mcp = Loop(
        lambda: Client(
            streamable_http_client(
                f"{url}/mcp", http_client=httpx2.AsyncClient(headers=headers, timeout=120)
            ),
            read_timeout_seconds=120,
        )
    )
    stdio_mcp = Loop(
        lambda: Client(
            StdioServerParameters(command=sys.executable, args=["-m", "graphsvc", "mcp"], env=env),
            read_timeout_seconds=120,
        )
    )

    def graphql(document: str, query: str) -> None:
        body = gql.post("/graphql", json={"query": document, "variables": {"q": query}}).json()
        assert "errors" not in body, body

    def mcp(loop: Loop, tool: str, query: str) -> None:
        arguments: dict[str, Any] = {"query": query}
        arguments.update({"limit": 10} if tool == "search" else {"memoryTokenBudget": 1000})
        result = loop.run(lambda c: c.call_tool(tool, arguments))
        assert not result.is_error, result

    paths: dict[str, Callable[[str, str], None]] = {
        "graphql": lambda op, q: graphql(SEARCH if op == "search" else READ, q),
        "mcp-http": lambda op, q: mcp(http_mcp, op, q),
        "mcp-stdio": lambda op, q: mcp(stdio_mcp, op, q),
    }
    times: dict[str, dict[str, list[float]]] = {p: {"search": [], "read": []} for p in paths}
    try:
        for path in paths.values():  # warm every path (model, caches, connections)
            for q in QUERIES:
                path("search", q)
                path("read", q)
        for i in range(args.rounds):
            q = QUERIES[i % len(QUERIES)]
            for op in ("search", "read"):
                # Rotate which path goes first, so none always follows another.
                order = list(paths)[i % 3 :] + list(paths)[: i % 3]
                for name in order:
                    t = time.perf_counter()
                    paths[name](op, q)
                    times[name][op].append(time.perf_counter() - t)
    finally:
        http_mcp.close()
        stdio_mcp.close()
        gql.close()
        server.should_exit = True
        thread.join(timeout=10)
        db.close()
        neo.close()
    load_after = os.getloadavg()
    rows: dict[str, Any] = {}
    for name, ops in times.items():
        rows[name] = {op: _ms(values) for op, values in ops.items()}
    for name in ("mcp-http", "mcp-stdio"):
        for op in ("search", "read"):
            base, got = rows["graphql"][op], rows[name][op]
            got["p50Ratio"] = round(got["p50"] / base["p50"], 2)
            got["p95Ratio"] = round(got["p95"] / base["p95"], 2)
    print(f"{args.rounds} calls per path and operation; load {load_before} -> {load_after}")
    for op in ("search", "read"):
        for name in paths:
            r = rows[name][op]
            ratio = f"  ×{r['p50Ratio']} p50, ×{r['p95Ratio']} p95" if "p50Ratio" in r else ""
            print(f"{op:<6} {name:<9} p50 {r['p50']:7.2f} ms  p95 {r['p95']:7.2f} ms{ratio}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps(
            {
                "rounds": args.rounds,
                "loadBefore": load_before,
                "loadAfter": load_after,
                "results": rows,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
