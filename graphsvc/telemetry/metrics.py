"""Prometheus metrics of one graphsvc process (served at ``/metrics``).

Names follow the Prometheus conventions: base units (seconds), ``_total`` for
counters, and only bounded labels — an operation is a GraphQL root field name
from the schema (or ``unknown``), a query name is a ``cypher/`` file stem, a code is
one of the error tree's codes. No atom ids, texts or tokens ever become labels.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from graphsvc.telemetry.stages import exposition_lines as stage_lines

__all__ = [
    "CONTENT_TYPE",
    "REGISTRY",
    "TimedEmbedder",
    "exposition",
    "observe_request",
    "timed_query",
    "track_jobs",
]

REGISTRY = CollectorRegistry(auto_describe=True)
CONTENT_TYPE = CONTENT_TYPE_LATEST

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

REQUESTS = Counter(
    "graphsvc_requests",
    "HTTP requests answered, by GraphQL operation (root field) and error code ('ok').",
    ["operation", "code"],
    registry=REGISTRY,
)
REQUEST_SECONDS = Histogram(
    "graphsvc_request_duration_seconds",
    "Time from the request's arrival to its answer.",
    ["operation", "code"],
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)
QUERY_SECONDS = Histogram(
    "graphsvc_neo4j_query_duration_seconds",
    "Time of one named Cypher query (cypher/<name>.cypher), rows pulled included.",
    ["query"],
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)
QUERY_ERRORS = Counter(
    "graphsvc_neo4j_query_errors",
    "Named Cypher queries that raised.",
    ["query"],
    registry=REGISTRY,
)
EMBED_SECONDS = Histogram(
    "graphsvc_embedding_duration_seconds",
    "Time to embed one batch of texts.",
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)
EMBED_TEXTS = Counter("graphsvc_embedded_texts", "Texts embedded.", registry=REGISTRY)


class _Jobs:
    """Background job gauges, read from the workers when ``/metrics`` is scraped."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sources: dict[int, Callable[[], tuple[int, int]]] = {}

    def track(self, key: int, source: Callable[[], tuple[int, int]]) -> None:
        with self._lock:
            self._sources[key] = source

    def collect(self) -> Iterator[Any]:
        with self._lock:
            sources = list(self._sources.values())
        # Every source counts the jobs in the database it serves; one process
        # serves one database, so the largest count is the database's.
        pending = failed = 0
        for source in sources:
            p, f = source()
            pending, failed = max(pending, p), max(failed, f)
        yield GaugeMetricFamily(
            "graphsvc_jobs_pending",
            "Background jobs (deferred atomisations and embeddings) pending in the database.",
            pending,
        )
        # A gauge: `graphsvc jobs retry` takes a job out of the failed ones.
        yield GaugeMetricFamily(
            "graphsvc_jobs_failed",
            "Background jobs that failed and wait for `graphsvc jobs retry`.",
            failed,
        )


_JOBS = _Jobs()
REGISTRY.register(_JOBS)


def track_jobs(key: int, source: Callable[[], tuple[int, int]]) -> None:
    """Report ``source() -> (pending, failed)`` in the job metrics (one per ``key``)."""
    _JOBS.track(key, source)


def observe_request(operation: str, code: str, seconds: float) -> None:
    REQUESTS.labels(operation, code).inc()
    REQUEST_SECONDS.labels(operation, code).observe(seconds)


@contextmanager
def timed_query(name: str) -> Iterator[None]:
    """Time the named query's block in ``graphsvc_neo4j_query_duration_seconds``."""
    started = time.perf_counter()
    try:
        yield
    except BaseException:
        QUERY_ERRORS.labels(name).inc()
        raise
    finally:
        QUERY_SECONDS.labels(name).observe(time.perf_counter() - started)


def exposition() -> bytes:
    """The text exposition format of every graphsvc metric (and the stage timer's
    totals while it is on: :mod:`graphsvc.telemetry.stages`)."""
    extra = stage_lines()
    body = generate_latest(REGISTRY)
    return body + "".join(f"{line}\n" for line in extra).encode() if extra else body


class TimedEmbedder:
    """An Embedder that records each ``embed`` call's time; everything else is passed on."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.model_name: str = inner.model_name
        self.dimension: int = inner.dimension

    @property
    def inner(self) -> Any:
        return self._inner

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        with EMBED_SECONDS.time():
            vectors: list[list[float]] = self._inner.embed(texts)
        EMBED_TEXTS.inc(len(texts))
        return vectors

    def embed_query(self, text: str) -> list[float]:
        encode = getattr(self._inner, "embed_query", None)
        with EMBED_SECONDS.time():
            vector: list[float] = encode(text) if encode else self._inner.embed([text])[0]
        EMBED_TEXTS.inc()
        return vector

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
