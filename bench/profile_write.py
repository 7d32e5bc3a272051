"""Profile of the GraphQL ``write`` path: where a 200-change batch spends its time.

Run::

    .venv/bin/python bench/profile_write.py [--batches 5] [--size 200] [--top 25]
                                            [--json bench/results/profile_write.json]

Each batch is ``--size`` new atoms, each with one link (to the previous atom of the
batch, ``local``) and one citation, posted as one ``write`` mutation to the real
ASGI app (strawberry, starlette) through httpx's in-process transport. The first
batch warms up (JIT of Neo4j, model allocations); the others are timed, then run
again under cProfile, with ``asyncio.to_thread`` made inline so the resolver's
service call is profiled in the same thread as the GraphQL layer around it. The
cumulative times of the stages (GraphQL parsing/coercion, edge parsing, plan
validation, embedding, token counting, the transaction, the views, serialisation)
are printed with the top functions, and written as JSON.

The timed batches alternate two variants of the embedder so that both see the same
machine load: ``onnx`` (as shipped: bodies through onnxruntime, one text per run, on
a few threads) and ``torch`` (bodies in PyTorch batches of 64 on torch's threads, the
path before issue 19), toggled on the one loaded model.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import pstats
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.http.app import create_app  # noqa: E402  (path set up just above)
from graphsvc.keys.auth import AuthTable  # noqa: E402
from graphsvc.localdb import LocalNeo4j  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.settings import Settings  # noqa: E402
from graphsvc.store.connection import Database  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

WRITE = """
mutation($changes: [ChangeInput!]!) {
  write(changes: $changes) {
    operationId indexing
    changes { id atom { atomId rev state text head sources
      links { role unavailable required at orderKey target { atomId rev } } } }
  }
}
"""

# Functions whose cumulative time is a stage of the request.
STAGES = {
    "graphql execute (whole request)": ("graphql/execution/execute.py", "execute"),
    "input coercion (graphql-core)": ("graphql/execution/values.py", "get_argument_values"),
    "input_to_json": ("graphsvc/api/", "input_to_json"),
    "parse_changes (pydantic)": ("graphsvc/inputs.py", "parse_changes"),
    "service.write": ("graphsvc/service.py", "write"),
    "validate_plan": ("graphsvc/core/write_plan.py", "validate_plan"),
    "build_request": ("graphsvc/ops/write.py", "build_request"),
    "embed": ("graphsvc/embed/sentence.py", "embed"),
    "tokenizer.count": ("graphsvc/tokenizer.py", "count"),
    "commit_write (transaction)": ("graphsvc/store/write_store.py", "commit_write"),
    "load_views": ("graphsvc/store/views.py", "load_views"),
    "after_write (namespace policy)": ("graphsvc/atomise/policy.py", "after_write"),
    "atom_view (output types)": ("graphsvc/api/", "atom_view"),
}


def batch(n: int, tag: str) -> list[dict[str, Any]]:
    changes = []
    for i in range(n):
        links = [{"role": "reply-to", "target": {"local": f"c{i - 1}"}}] if i else []
        changes.append(
            {
                "id": f"c{i}",
                "op": "CREATE",
                "content": {"text": f"{tag}: message {i} about tidal turbines", "links": links},
                "sources": [{"uri": "https://example.org/transcript", "version": tag}],
            }
        )
    return changes


async def post(client: httpx.AsyncClient, changes: list[dict[str, Any]]) -> None:
    r = await client.post("/graphql", json={"query": WRITE, "variables": {"changes": changes}})
    body = r.json()
    if body.get("errors"):
        raise RuntimeError(body["errors"])


async def run(app: Any, token: str, batches: list[list[dict[str, Any]]]) -> list[float]:
    transport = httpx.ASGITransport(app=app)
    headers = {"Authorization": f"Bearer {token}"}
    times = []
    async with httpx.AsyncClient(
        transport=transport, base_url="http://bench", headers=headers, timeout=300
    ) as client:
        for changes in batches:
            started = time.perf_counter()
            await post(client, changes)
            times.append(time.perf_counter() - started)
    return times


def stage_times(stats: pstats.Stats) -> dict[str, float]:
    out: dict[str, float] = {}
    table: Any = stats.stats  # type: ignore[attr-defined]
    for label, (file_part, func) in STAGES.items():
        total = 0.0
        for (filename, _, name), (_, _, _, cumulative, _) in table.items():
            if name == func and file_part in filename:
                total = max(total, cumulative)
        out[label] = round(total, 4)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batches", type=int, default=5)
    p.add_argument("--size", type=int, default=200)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "profile_write.json"))
    args = p.parse_args(argv)

    tmp = tempfile.TemporaryDirectory(prefix="graphsvc-bench-profile-")
    base = Settings.from_env(state_dir=Path(tmp.name))
    local: LocalNeo4j | None = None
    if os.environ.get("GRAPHSVC_NEO4J_URI"):
        settings = base
    else:
        local = LocalNeo4j(base, name="bench-profile", port=0, auth=False)
        settings = base.with_(neo4j_uri=local.start(die_with_parent=True).uri)
    db = Database(
        settings.neo4j.uri, settings.neo4j.user, settings.neo4j.password, settings.neo4j.database
    )
    try:
        db.apply_schema()
        embedder = get_embedder()
        service = service_for(settings, db, embedder, get_tokenizer())
        auth = AuthTable({})
        token = uuid.uuid4().hex
        auth.add(token, Binding(f"bench-profile-{token[:8]}", "default", "human", "bench"))
        app = create_app(service, auth)
        asyncio.run(run(app, token, [batch(args.size, "warm-up")]))
        variants: dict[str, list[float]] = {"onnx": [], "torch": []}
        for i in range(args.batches):
            for name in ("onnx", "torch") if i % 2 else ("torch", "onnx"):
                embedder._onnx_bodies = name == "onnx"
                variants[name] += asyncio.run(run(app, token, [batch(args.size, f"{name}-{i}")]))
        embedder._onnx_bodies = True
        timed = variants["onnx"]

        async def inline(func: Any, /, *a: Any, **kw: Any) -> Any:
            return func(*a, **kw)

        real_to_thread = asyncio.to_thread
        asyncio.to_thread = inline  # type: ignore[assignment]
        profiler = cProfile.Profile()
        try:
            profiler.enable()
            asyncio.run(
                run(app, token, [batch(args.size, f"profiled-{i}") for i in range(args.batches)])
            )
            profiler.disable()
        finally:
            asyncio.to_thread = real_to_thread  # type: ignore[assignment]
    finally:
        db.close()
        if local is not None:
            local.stop()
        tmp.cleanup()

    stats = pstats.Stats(profiler)
    stages = {k: round(v / args.batches, 4) for k, v in stage_times(stats).items()}
    per_batch = sorted(timed)[len(timed) // 2]
    medians = {k: sorted(v)[len(v) // 2] for k, v in variants.items()}
    print(f"{args.size}-change batch over GraphQL: median {per_batch * 1000:.0f} ms")
    print(
        f"  bodies in PyTorch batches (before): {medians['torch'] * 1000:.0f} ms; "
        f"onnx / torch = {medians['onnx'] / medians['torch']:.2f}"
    )
    print(f"  ({per_batch / args.size * 1000:.2f} ms per atom; load {os.getloadavg()[0]:.2f})")
    print("cumulative seconds per batch (profiled, so slower than the timing above):")
    for label, seconds in stages.items():
        print(f"  {label:<34} {seconds:8.3f}")
    buf = io.StringIO()
    pstats.Stats(profiler, stream=buf).sort_stats("tottime").print_stats(args.top)
    print(buf.getvalue())
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "command": "bench/profile_write.py " + " ".join(sys.argv[1:]),
                "batchSize": args.size,
                "batchSecondsMedian": round(per_batch, 4),
                "msPerAtom": round(per_batch / args.size * 1000, 3),
                "batchSeconds": {k: [round(t, 4) for t in v] for k, v in variants.items()},
                "medianSeconds": {k: round(v, 4) for k, v in medians.items()},
                "onnxVsTorch": round(medians["onnx"] / medians["torch"], 3),
                "profiledStageSecondsPerBatch": stages,
                "loadAverage": [round(x, 2) for x in os.getloadavg()],
                "cpus": os.cpu_count(),
            },
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
