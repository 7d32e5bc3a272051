"""Benchmark: ``read`` latency against corpus size, query embedding included.

Run::

    .venv/bin/python bench/read.py [--sizes 1000,10000,100000] [--reads 100]
                                   [--warmup 200] [--budget 2000] [--depth 2]
                                   [--operation read|search] [--http] [--peer]
                                   [--json PATH]

For each size it writes a corpus into a subject of its own, then times ``--reads``
calls of :meth:`graphsvc.service.Service.read` with varied queries (budget 2,000
tokens, depth 2, the default limit of 24 roots), each timed end to end: query
embedding, acquisition, activation solve, required closures, packing on exact
tiktoken counts, rendering, the manifest write and the cursor of the next page.
It prints p50/p95 per size and the ratio of the largest size's p95 to the first
size's p95 (the baseline, measured in the same run), and writes
``bench/results/read.json``.

``--operation search`` times ``search(limit: 10)`` instead (the same corpus, queries
and warm-up). ``--http`` times each call over HTTP instead of in process: a ``graphsvc
serve`` subprocess on the same Neo4j, one client on one kept-alive connection, the
GraphQL document asking for each hit's id, text and score (a read: the selection's
tokens and each item's text). ``--peer`` (with ``--operation search``) then times
neo4j-graphrag's ``HybridCypherRetriever`` (linear ranker, alpha 0.8, top k 128 and
512; :class:`bench.quality.Peer`) on the same subject, queries and warm-up, in this
process, its query embedding included, and prints graphsvc's p50 and p95 as ratios
to each.

The corpus. Short synthetic sentences from a fixed vocabulary (seeded, so every run
builds the same corpus); every atom links to two others of its subject (roles
``related``/``part-of``/``see-also``, half logical, half observed) and 10% of the
links are ``required``, so reads take real required closures.

**Bulk loading.** Writing 100k atoms through ``service.write`` (256 changes per
batch, validation, CAS, operation records) would take far longer than the reads we
measure, so the benchmark loads the corpus with ``UNWIND`` queries straight through
the driver, in chunks of 5,000, into the same data model the write path creates:
``(:Atom {subject, atomId, headRev, state, createdAt})-[:HEAD|HAS_REVISION]->
(:Revision:Current {subject, atomId, rev, text, state, digest, tokens, sources,
embedding, ...})`` and ``(:Revision)-[:LINK {role, at, required, orderKey,
ordinal}]->(:Atom | :Revision)``. Embeddings come from the real embedder, computed in
batches; ``--embed pooled`` instead embeds a pool of ``--pool`` distinct sentences and
gives every other atom the concatenation of two pool sentences with the normalised
sum of their embeddings (distinct vectors, same index sizes; only for machines where
embedding 100k sentences takes too long — the result file records which was used).

**Two timings per size.** The reads are timed first on the vector index as the load
left it (its Lucene segments, ``vectorIndexSegments``, are however many the load's
flushes merged into), then again (other query texts, same number of warm-up reads)
after ``graphsvc index rebuild`` has re-populated it in one pass (``rebuilt`` in the
result file; ``--no-rebuild`` skips it). Each vector query searches every segment,
so the two differ by the vector query's cost; the rebuilt timing follows the
as-loaded one, on a JVM warmed by it.

Each size is measured right after it is loaded and the managed Neo4j has gone idle
(the load leaves index merges and a checkpoint running; ``settleSeconds`` records
the wait). ``--warmup`` reads (default 200) run first, untimed, with other queries
than the timed ones: a freshly started Neo4j JVM is still compiling its hot paths
over the first few hundred reads (measured: a restarted server answered the same
reads in ~150 ms, then ~100 ms after 150 reads, ~85 ms after ~1,000), and a service
answers most of its reads long after that. Neo4j is the managed one
(``graphsvc.localdb``, started for the run and stopped at the end) unless
``GRAPHSVC_NEO4J_URI`` points at a server. ``--torch-threads`` sets torch's
intra-op threads for the timed reads (default: torch's own choice, as the service
runs); the corpus is embedded with ``--load-threads`` (default 1, which is faster
than oversubscribed threads when the CPU is shared). The load average is recorded
per size: on a shared machine it explains more of the spread than the corpus does.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from neo4j import RoutingControl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import rss_mb  # noqa: E402  (path set up just above)
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.core.citations import text_digest  # noqa: E402
from graphsvc.core.requests import ReadRequest, SearchRequest  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.localdb import LocalNeo4j  # noqa: E402
from graphsvc.ops.index import rebuild_vector_index  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.service import Service  # noqa: E402
from graphsvc.settings import Settings  # noqa: E402
from graphsvc.store.connection import Database  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

CHUNK = 5_000
LINKS_PER_ATOM = 2
REQUIRED_SHARE = 0.10
ROLES = ("related", "part-of", "see-also")
WARMUP_READS = 200  # a fresh JVM compiles its hot paths over the first few hundred reads


def _words(text: str, sep: str | None = None) -> tuple[str, ...]:
    return tuple(text.split(sep))


ADJ = _words(
    "ancient quiet northern coastal volcanic frozen tidal urban rural alpine arid humid "
    "medieval modern industrial sacred remote crowded fertile rocky sandy misty golden "
    "silent restless hidden famous sunken floating copper iron wooden marble"
)
NOUN = _words(
    "harbour glacier monastery orchard lighthouse railway bridge market canal vineyard "
    "observatory library quarry fortress meadow reef delta forest mill tannery bakery "
    "brewery shipyard telescope comet eclipse fungus lichen beetle falcon salmon wolf "
    "treaty charter ledger census guild tariff dynasty rebellion festival pilgrimage "
    "enzyme protein crystal magnet turbine reactor circuit algorithm compiler protocol"
)
VERB = _words(
    "exports shelters records feeds protects measures attracts replaces predicts drains "
    "powers connects divides inspires funds taxes maps trades hides reveals"
)
PLACE = _words(
    "Lisbon Kyoto Quito Oslo Cairo Lima Perth Tallinn Hanoi Dakar Bergen Cusco Riga "
    "Valparaiso Tromso Zanzibar Samarkand Timbuktu Reykjavik Ushuaia"
)
WHEN = _words(
    "in winter|during the monsoon|at dawn|after the war|since the 1800s|every spring|"
    "before the flood|under the old regime|at high tide|in the dry season",
    "|",
)


def sentence(rng: random.Random) -> str:
    return (
        f"The {rng.choice(ADJ)} {rng.choice(NOUN)} of {rng.choice(PLACE)} "
        f"{rng.choice(VERB)} the {rng.choice(ADJ)} {rng.choice(NOUN)} {rng.choice(WHEN)}."
    )


def unseen(n: int, seed: int, seen: set[str]) -> list[str]:
    """Up to ``n`` queries (seeded) whose texts are not in ``seen``."""
    return [q for q in queries(2 * n, seed) if q not in seen][:n]


def queries(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    shapes = (
        lambda: f"{rng.choice(ADJ)} {rng.choice(NOUN)} in {rng.choice(PLACE)}",
        lambda: f"which {rng.choice(NOUN)} {rng.choice(VERB)} the {rng.choice(NOUN)}?",
        lambda: f"{rng.choice(NOUN)} and {rng.choice(NOUN)} {rng.choice(WHEN)}",
        lambda: f"history of the {rng.choice(ADJ)} {rng.choice(NOUN)}",
    )
    return [shapes[i % len(shapes)]() for i in range(n)]


# ----------------------------------------------------------------------------- loading

CREATE_ATOMS = """
UNWIND $rows AS r
CREATE (a:Atom {subject: $subject, atomId: r.atomId, headRev: 1, state: 'active',
                createdAt: $now})
CREATE (v:Revision:Current {subject: $subject, atomId: r.atomId, rev: 1, text: r.text,
                            state: 'active', digest: r.digest, tokens: r.tokens,
                            sources: '[]', createdAt: $now, actorKind: 'human',
                            actorId: 'bench', policy: 'default', operationId: $op,
                            changeId: r.atomId, embedding: r.embedding})
CREATE (a)-[:HAS_REVISION]->(v)
CREATE (a)-[:HEAD]->(v)
"""

CREATE_LOGICAL = """
UNWIND $links AS l
MATCH (s:Revision {subject: $subject, atomId: l.src, rev: 1})
MATCH (t:Atom {subject: $subject, atomId: l.dst})
CREATE (s)-[:LINK {role: l.role, at: 'logical', required: l.required, orderKey: null,
                   ordinal: l.ordinal, boundRev: 1}]->(t)
"""

CREATE_OBSERVED = """
UNWIND $links AS l
MATCH (s:Revision {subject: $subject, atomId: l.src, rev: 1})
MATCH (t:Revision {subject: $subject, atomId: l.dst, rev: 1})
CREATE (s)-[:LINK {role: l.role, at: 'observed', required: l.required, orderKey: null,
                   ordinal: l.ordinal}]->(t)
"""


def _write(db: Database, text: str, **params: Any) -> None:
    db.driver.execute_query(text, params, database_=db.database, routing_=RoutingControl.WRITE)


def corpus_texts(
    n: int, seed: int, mode: str, pool: int, embedder: Any
) -> tuple[list[str], np.ndarray]:
    """``n`` texts and their unit embeddings (real, or pooled; see the module doc)."""
    rng = random.Random(seed)
    if mode == "real" or n <= pool:
        texts = [f"{sentence(rng)} (note {i})" for i in range(n)]
        return texts, _embed(embedder, texts)
    base = [f"{sentence(rng)} (note {i})" for i in range(pool)]
    base_vecs = _embed(embedder, base)
    a = np.array([rng.randrange(pool) for _ in range(n - pool)])
    b = np.array([rng.randrange(pool) for _ in range(n - pool)])
    texts = base + [f"{base[i]} {base[j]}" for i, j in zip(a.tolist(), b.tolist(), strict=True)]
    mixed = base_vecs[a] + base_vecs[b]
    mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
    return texts, np.vstack([base_vecs, mixed])


def _embed(embedder: Any, texts: Sequence[str]) -> np.ndarray:
    out = np.empty((len(texts), embedder.dimension), dtype=np.float64)
    step = 2_048
    t0 = time.perf_counter()
    for start in range(0, len(texts), step):
        out[start : start + step] = embedder.embed(texts[start : start + step])
        done = min(start + step, len(texts))
        rate = done / (time.perf_counter() - t0)
        print(f"  embedded {done}/{len(texts)} ({rate:.0f}/s)", file=sys.stderr, flush=True)
    return out


def load(
    service: Service, subject: str, n: int, seed: int, mode: str, pool: int
) -> dict[str, float]:
    """Bulk-load ``n`` atoms with links into ``subject``; returns phase timings (s)."""
    t0 = time.perf_counter()
    texts, vecs = corpus_texts(n, seed, mode, pool, service.embedder)
    t_embed = time.perf_counter() - t0
    rng = random.Random(seed + 1)
    ids = [uuid.UUID(int=rng.getrandbits(128)).hex for _ in range(n)]
    now = datetime.now(UTC).isoformat()
    op = uuid.uuid4().hex
    count = service.tokenizer.count
    t1 = time.perf_counter()
    for start in range(0, n, CHUNK):
        rows = [
            {
                "atomId": ids[i],
                "text": texts[i],
                "digest": text_digest(texts[i]),
                "tokens": count(texts[i]),
                "embedding": vecs[i].tolist(),
            }
            for i in range(start, min(start + CHUNK, n))
        ]
        _write(service.db, CREATE_ATOMS, rows=rows, subject=subject, now=now, op=op)
    logical: list[dict[str, Any]] = []
    observed: list[dict[str, Any]] = []
    for i in range(n):
        for ordinal in range(LINKS_PER_ATOM):
            j = (i + rng.randrange(1, n)) % n
            link = {
                "src": ids[i],
                "dst": ids[j],
                "role": rng.choice(ROLES),
                "required": rng.random() < REQUIRED_SHARE,
                "ordinal": ordinal,
            }
            (logical if rng.random() < 0.5 else observed).append(link)
    for text, links in ((CREATE_LOGICAL, logical), (CREATE_OBSERVED, observed)):
        for start in range(0, len(links), CHUNK):
            _write(service.db, text, links=links[start : start + CHUNK], subject=subject)
    _write(service.db, "CALL db.awaitIndexes(600)")
    return {"embedSeconds": t_embed, "loadSeconds": time.perf_counter() - t1}


# ----------------------------------------------------------------------------- timing


def settle(pid: int | None, *, quiet_share: float = 0.05, window: float = 2.0) -> float:
    """Wait until the managed Neo4j is idle after a bulk load; returns seconds waited.

    Idle means three windows in a row (merges pause between segments).

    A load leaves background work behind (Lucene merging the new index segments,
    a checkpoint); reads timed during it measure that work, not reads. Idle: under
    ``quiet_share`` of one core over ``window`` seconds; gives up after 300 s.
    """
    if pid is None:
        return 0.0
    ticks = os.sysconf("SC_CLK_TCK")

    def cpu_seconds() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime

    t0 = time.monotonic()
    quiet = 0
    while time.monotonic() - t0 < 300 and quiet < 3:  # three quiet windows in a row
        before = cpu_seconds()
        time.sleep(window)
        quiet = quiet + 1 if (cpu_seconds() - before) / window < quiet_share else 0
    return time.monotonic() - t0


def vector_segments(home: Path) -> int:
    """Lucene segments of the managed Neo4j's vector indexes after the load settled.

    The vector query searches each segment's HNSW graph for the top k, so its cost
    grows with their number; how many a load leaves depends on how its flushes
    happened to merge (merge factor 4), so it is recorded beside the latencies.
    """
    return sum(1 for _ in (home / "data").glob("databases/*/schema/index/vector-*/*/*/*.si"))


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty sample."""
    ordered = sorted(values)
    rank = max(1, int(np.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


HTTP_READ = (
    "query($q: String!, $b: Int!, $d: Int) { read(query: $q, memoryTokenBudget: $b, depth: $d) "
    "{ selection { tokens } items { blocked atom { text } } } }"
)
HTTP_SEARCH = (
    "query($q: String!, $d: Int) { search(query: $q, limit: 10, depth: $d) "
    "{ hits { score atom { atomId text } } } }"
)


class Caller:
    """One call of the timed operation, in process or over HTTP (``url`` set): returns
    (tokens presented, items presented) for a read, (0, hits) for a search."""

    def __init__(
        self, service: Service, binding: Binding, operation: str, budget: int, depth: int,
        url: str | None = None, token: str | None = None,
    ) -> None:  # fmt: skip
        self.service, self.binding, self.operation = service, binding, operation
        self.budget, self.depth = budget, depth
        self.client = (
            None
            if url is None
            else httpx.Client(
                base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60
            )
        )

    def __call__(self, q: str) -> tuple[int, int]:
        if self.client is not None:
            return self._http(q)
        if self.operation == "search":
            found = self.service.search(self.binding, SearchRequest(q, limit=10, depth=self.depth))
            return 0, len(found.hits)
        result = self.service.read(self.binding, ReadRequest(q, self.budget, depth=self.depth))
        assert result.selection.tokens <= self.budget
        return result.selection.tokens, sum(1 for i in result.items if not i.blocked)

    def _http(self, q: str) -> tuple[int, int]:
        assert self.client is not None
        search = self.operation == "search"
        body = {
            "query": HTTP_SEARCH if search else HTTP_READ,
            "variables": {"q": q, "d": self.depth, **({} if search else {"b": self.budget})},
        }
        answer = self.client.post("/graphql", json=body).json()
        if answer.get("errors"):
            raise RuntimeError(f"{self.operation} over HTTP failed: {answer['errors']}")
        data = answer["data"][self.operation]
        if search:
            return 0, len(data["hits"])
        assert data["selection"]["tokens"] <= self.budget
        return data["selection"]["tokens"], sum(1 for i in data["items"] if not i["blocked"])

    def close(self) -> None:
        if self.client is not None:
            self.client.close()


def measure(
    service: Service, call: Caller, qs: Sequence[str], warmup: Sequence[str]
) -> dict[str, Any]:
    # Warm Neo4j's query plans and page cache, untimed, with other queries than the
    # timed ones (so no cache of ours has seen a timed query's texts before).
    for q in warmup:
        call(q)
    times: list[float] = []
    embed_times: list[float] = []
    tokens: list[int] = []
    presented: list[int] = []
    for q in qs:
        t0 = time.perf_counter()
        service.embedder.embed([q])
        embed_times.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        got_tokens, got_items = call(q)
        times.append((time.perf_counter() - t0) * 1000)
        tokens.append(got_tokens)
        presented.append(got_items)
    return {
        "reads": len(times),
        "p50Ms": round(percentile(times, 50), 2),
        "p95Ms": round(percentile(times, 95), 2),
        "meanMs": round(statistics.fmean(times), 2),
        "maxMs": round(max(times), 2),
        "queryEmbeddingP50Ms": round(percentile(embed_times, 50), 2),
        "queryEmbeddingP95Ms": round(percentile(embed_times, 95), 2),
        "queryRuntime": getattr(service.embedder, "query_runtime", "torch"),
        "meanTokens": round(statistics.fmean(tokens), 1),
        "meanPresented": round(statistics.fmean(presented), 1),
    }


# ----------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1000,10000,100000")
    p.add_argument("--reads", type=int, default=100)
    p.add_argument(
        "--warmup", type=int, default=WARMUP_READS, help="untimed reads before each size"
    )
    p.add_argument("--budget", type=int, default=2000)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--embed", choices=("real", "pooled"), default="real")
    p.add_argument("--pool", type=int, default=10_000)
    p.add_argument(
        "--torch-threads", type=int, default=0, help="torch threads for the reads (0: default)"
    )
    p.add_argument(
        "--load-threads", type=int, default=1, help="torch threads for embedding the corpus"
    )
    p.add_argument("--seed", type=int, default=7)
    p.add_argument(
        "--no-rebuild",
        action="store_true",
        help="only time reads on the index as the load left it (no `index rebuild` pass)",
    )
    p.add_argument("--operation", choices=("read", "search"), default="read")
    p.add_argument(
        "--http", action="store_true", help="time each call over HTTP (a graphsvc serve)"
    )
    p.add_argument(
        "--peer",
        action="store_true",
        help="with --operation search: also time neo4j-graphrag's HybridCypherRetriever",
    )
    p.add_argument("--json", default=None, help="default bench/results/<operation>.json")
    args = p.parse_args(argv)
    if args.peer and args.operation != "search":
        p.error("--peer compares searches: use it with --operation search")
    if args.json is None:
        suffix = "_http" if args.http else ""
        args.json = str(ROOT / "bench" / "results" / f"{args.operation}{suffix}.json")
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    import torch

    read_threads = args.torch_threads or torch.get_num_threads()

    # A plain SIGTERM would skip the finally below and leave Neo4j and the temp dir.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    external = os.environ.get("GRAPHSVC_NEO4J_URI", "")
    tmp = tempfile.TemporaryDirectory(prefix="graphsvc-bench-read-")
    state = Path(tmp.name)
    local: LocalNeo4j | None = None
    neo4j_pid: int | None = None
    if external:
        settings = Settings.from_env(state_dir=state)
    else:
        base = Settings.from_env(state_dir=state)
        if "GRAPHSVC_NEO4J_HEAP" not in os.environ:
            base = base.with_(neo4j_heap="2g")
        if "GRAPHSVC_NEO4J_PAGECACHE" not in os.environ:
            base = base.with_(neo4j_pagecache="1g")
        local = LocalNeo4j(base, name="bench", port=0, auth=False)
        inst = local.start(die_with_parent=True)
        neo4j_pid = inst.pid
        settings = base.with_(neo4j_uri=inst.uri)
    db = Database(
        settings.neo4j.uri, settings.neo4j.user, settings.neo4j.password, settings.neo4j.database
    )
    results: dict[str, Any] = {}
    ratio = 1.0
    try:
        db.apply_schema()
        service = service_for(settings, db, get_embedder(), get_tokenizer())
        service.embedder.embed(["warm the model"])
        rss_at_start = rss_mb()
        qs = queries(args.reads, args.seed)
        # Warm-up never sees a timed query's text, and the second timing of a size
        # (after the rebuild) uses other texts again, so no cache of ours has seen them.
        warmup = unseen(args.warmup, args.seed + 1_000, set(qs))
        qs2 = unseen(args.reads, args.seed + 2_000, {*qs, *warmup})
        warmup2 = unseen(args.warmup, args.seed + 3_000, {*qs, *warmup, *qs2})
        run_id = uuid.uuid4().hex[:8]
        for n in sizes:
            subject = f"bench-read-{run_id}-{n}"
            print(f"size {n}: loading into subject {subject}...", file=sys.stderr, flush=True)
            torch.set_num_threads(args.load_threads)
            timings = load(service, subject, n, args.seed + n, args.embed, args.pool)
            timings["settleSeconds"] = settle(neo4j_pid)
            segments = vector_segments(local.home) if local is not None else None
            torch.set_num_threads(read_threads)
            print(
                f"  embedded in {timings['embedSeconds']:.0f}s, "
                f"loaded in {timings['loadSeconds']:.0f}s; timing {args.reads} reads...",
                file=sys.stderr,
                flush=True,
            )
            binding = Binding(subject, "default", "human", "bench")
            call = caller(service, binding, settings, state, args)
            try:
                stats = measure(service, call, qs, warmup)
            finally:
                call.close()
            gc.collect()
            results[str(n)] = {
                **stats,
                # This process holds the service (model loaded) and the loader's
                # leftovers: an upper bound of a serving process's RSS at this size.
                "serviceRssMb": rss_mb(),
                "serviceRssAtStartMb": rss_at_start,
                "neo4jRssMb": rss_mb(neo4j_pid) if neo4j_pid else None,
                **{k: round(v, 1) for k, v in timings.items()},
                "loadAverage": [round(x, 2) for x in os.getloadavg()],
                "vectorIndexSegments": segments,
            }
            ratio = write_report(Path(args.json), args, settings, results)
            print(f"  {n:>7} atoms, index as loaded: {_line(stats, segments)}", flush=True)
            if args.peer:
                results[str(n)]["peer"] = time_peer(service, db, subject, qs, warmup, stats)
                ratio = write_report(Path(args.json), args, settings, results)
            print(
                f"  RSS: this process (service, model loaded) {results[str(n)]['serviceRssMb']} MiB"
                f" (at start {rss_at_start} MiB), Neo4j {results[str(n)]['neo4jRssMb']} MiB",
                flush=True,
            )
            if args.no_rebuild:
                continue
            print("  rebuilding the vector index...", file=sys.stderr, flush=True)
            rebuild = rebuild_vector_index(db)
            settle(neo4j_pid)
            segments = vector_segments(local.home) if local is not None else None
            call = caller(service, binding, settings, state, args)
            try:
                stats = measure(service, call, qs2, warmup2)
            finally:
                call.close()
            results[str(n)]["rebuilt"] = {
                **stats,
                "rebuildSeconds": rebuild.seconds,
                "vectorIndexSegments": segments,
                "loadAverage": [round(x, 2) for x in os.getloadavg()],
            }
            ratio = write_report(Path(args.json), args, settings, results)
            print(f"  {n:>7} atoms, index rebuilt:  {_line(stats, segments)}", flush=True)
    finally:
        for proc in _SERVERS:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
        db.close()
        if local is not None:
            local.stop()
        tmp.cleanup()
    if len(results) > 1:
        print(f"p95 ratio {sizes[-1]}/{sizes[0]} atoms (as loaded): {ratio:.2f}")
        if not args.no_rebuild:
            first, last = results[str(sizes[0])], results[str(sizes[-1])]
            rebuilt = last["rebuilt"]["p95Ms"] / first["rebuilt"]["p95Ms"]
            print(f"p95 ratio {sizes[-1]}/{sizes[0]} atoms (rebuilt): {rebuilt:.2f}")

    print(f"wrote {args.json}")
    return 0


_SERVERS: list[subprocess.Popen[bytes]] = []


def time_peer(
    service: Service,
    db: Database,
    subject: str,
    qs: Sequence[str],
    warmup: Sequence[str],
    ours: dict[str, Any],
) -> dict[str, Any]:
    """neo4j-graphrag's hybrid retriever on ``subject`` (top k 128 and 512), timed as
    :func:`measure` times graphsvc, and graphsvc's p50/p95 (``ours``) over each."""
    from bench.quality import Peer, unit_embed

    peer = Peer(db, unit_embed(service.embedder))
    out: dict[str, Any] = {}
    for k in (128, 512):
        for q in warmup:
            peer.search(subject, q, k)
        times = [peer.search(subject, q, k)[1] for q in qs]
        p50, p95 = percentile(times, 50), percentile(times, 95)
        out[f"k{k}"] = {
            "p50Ms": round(p50, 2),
            "p95Ms": round(p95, 2),
            "graphsvcP50Ratio": round(ours["p50Ms"] / p50, 2),
            "graphsvcP95Ratio": round(ours["p95Ms"] / p95, 2),
        }
        print(
            f"    peer k {k} (in process, query embedding included): p50 {p50:6.1f} ms   "
            f"p95 {p95:6.1f} ms; graphsvc / peer p50 {ours['p50Ms'] / p50:.2f}, "
            f"p95 {ours['p95Ms'] / p95:.2f}",
            flush=True,
        )
    return out


def caller(
    service: Service, binding: Binding, settings: Settings, state: Path, args: argparse.Namespace
) -> Caller:
    """The timed operation in process, or over HTTP through a ``graphsvc serve`` of
    ``binding``'s subject (started once per run, stopped at exit)."""
    if not args.http:
        return Caller(service, binding, args.operation, args.budget, args.depth)
    from bench.load import free_port, serve_env, start_server

    token = uuid.uuid4().hex
    auth = state / f"auth-{binding.subject}.json"
    auth.write_text(
        json.dumps(
            {"tokens": {token: {"subject": binding.subject, "actor": {"kind": "human", "id": "b"}}}}
        )
    )
    for proc in _SERVERS:  # one server at a time: each size its own subject and token
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    _SERVERS.clear()
    port = free_port()
    _SERVERS.append(start_server(serve_env(settings, state, auth), port, 1))
    url = f"http://127.0.0.1:{port}"
    return Caller(service, binding, args.operation, args.budget, args.depth, url, token)


def _line(stats: dict[str, Any], segments: int | None) -> str:
    return (
        f"p50 {stats['p50Ms']:7.1f} ms   p95 {stats['p95Ms']:7.1f} ms"
        f"   (query embedding p50 {stats['queryEmbeddingP50Ms']:.1f} ms,"
        f" vector index segments {segments})"
    )


def write_report(
    path: Path, args: argparse.Namespace, settings: Settings, results: dict[str, Any]
) -> float:
    """Write the result file (after every size, so a cut run keeps what it measured)."""
    sizes = list(results)
    first, last = sizes[0], sizes[-1]
    ratio = float(results[last]["p95Ms"]) / float(results[first]["p95Ms"])
    report = {
        "benchmark": f"{args.operation} latency vs corpus size (query embedding included)",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "settings": {
            "operation": args.operation,
            "http": args.http,
            "budget": args.budget,
            "depth": args.depth,
            "limit": settings.read.read_limit,
            "reads": args.reads,
            "warmupReads": args.warmup,
            "linksPerAtom": LINKS_PER_ATOM,
            "requiredShare": REQUIRED_SHARE,
            "embed": args.embed,
            "pool": args.pool if args.embed == "pooled" else None,
            "torchThreadsForReads": args.torch_threads or "default",
            "torchThreadsForLoading": args.load_threads,
            "neo4j": "external" if os.environ.get("GRAPHSVC_NEO4J_URI") else "managed",
        },
        "sizes": results,
        "baseline": first,
        "p95Ratio": {"of": f"{last}/{first}", "value": round(ratio, 2)},
        "p95RatioRebuilt": (
            {
                "of": f"{last}/{first}",
                "value": round(
                    float(results[last]["rebuilt"]["p95Ms"])
                    / float(results[first]["rebuilt"]["p95Ms"]),
                    2,
                ),
            }
            if "rebuilt" in results[first] and "rebuilt" in results[last]
            else None
        ),
        "targets": {"p95MsAt100k": 100, "p95Ratio100kOver1k": 3},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")
    return ratio


if __name__ == "__main__":
    sys.exit(main())
