"""Query embeddings computed beside the first database round trips, and kept.

A read's fulltext query and purge check do not need the query embedding, so the
embedding runs in a worker thread meanwhile (onnxruntime releases the GIL while it
computes; Neo4j is another process). Two workers: a concurrent request never
queues behind another's embedding for long.

**Kept**: the last ``cache_size`` query vectors of each embedder are kept by model
and text (a query vector is a function of the model, its query precision and the
text alone, so a kept one is the one the model would give). A kept vector answers
at once; the caller gets its own copy, and nothing but the time it took tells a
kept vector from a new one. The cache holds vectors of texts, not who asked.

**Not batched**: each query runs alone. Waiting queries encoded in one batch would
cost a third of the CPU, but not give the same vectors: the int8 graph quantises its
activations with one scale over the whole batch (up to ~0.03 per component apart),
and the fp32 graph's matrix kernels change with the batch's shape (~1e-7 apart for
some token lengths); a search's ranking must not depend on what else was asked at
the same time (docs/performance.md, "Requests per second").
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor

from graphsvc.embed.sentence import Embedder, embed_query
from graphsvc.telemetry.request_scope import RequestScope, current
from graphsvc.telemetry.stages import add as add_stage

__all__ = ["configure", "embed_soon"]

_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="graphsvc-embed")
_LOCK = threading.Lock()
# GRAPHSVC_QUERY_CACHE (graphsvc.settings.EmbeddingSettings).
_SIZE = [1024]
# Per embedder: (model name, text) → vector, least recently used first.
_KEPT: weakref.WeakKeyDictionary[Embedder, OrderedDict[tuple[str, str], tuple[float, ...]]] = (
    weakref.WeakKeyDictionary()
)


def configure(cache_size: int) -> None:
    """Keep at most ``cache_size`` query vectors per embedder (0: none); the serving
    process's settings."""
    with _LOCK:
        _SIZE[0] = max(0, cache_size)
        if not _SIZE[0]:
            _KEPT.clear()


def embed_soon(embedder: Embedder, text: str) -> Future[list[float]]:
    """Start embedding ``text``; ``.result()`` waits for it (and re-raises its error)."""
    kept = _kept(embedder, text)
    if kept is not None:
        future: Future[list[float]] = Future()
        future.set_result(list(kept))
        return future
    return _POOL.submit(_one, embedder, text, current())


def _one(embedder: Embedder, text: str, sc: RequestScope | None) -> list[float]:
    t0 = time.thread_time_ns()
    vector = embed_query(embedder, text)
    add_stage(sc, "embed", time.thread_time_ns() - t0)
    _keep(embedder, text, vector)
    return vector


def _kept(embedder: Embedder, text: str) -> tuple[float, ...] | None:
    with _LOCK:
        try:
            kept = _KEPT.get(embedder)
        except TypeError:  # an embedder that cannot be weakly referenced: not kept
            return None
        key = (embedder.model_name, text)
        if kept is None or key not in kept:
            return None
        kept.move_to_end(key)
        return kept[key]


def _keep(embedder: Embedder, text: str, vector: list[float]) -> None:
    with _LOCK:
        size = _SIZE[0]
        if not size:
            return
        try:
            kept = _KEPT.setdefault(embedder, OrderedDict())
        except TypeError:
            return
        key = (embedder.model_name, text)
        kept[key] = tuple(vector)
        kept.move_to_end(key)
        while len(kept) > size:
            kept.popitem(last=False)
