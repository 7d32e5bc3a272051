"""Query embeddings computed beside the first database round trips, kept and batched.

A read's fulltext query and purge check do not need the query embedding, so the
embedding runs in a worker thread meanwhile (onnxruntime releases the GIL while it
computes; Neo4j is another process). Two workers: a concurrent request never
queues behind another's embedding for long.

**Kept**: the last ``cache_size`` query vectors of each embedder are kept by text
(the embedder is the key's model: a vector is a function of the model, its query
precision and the text alone, so a kept one is the one the model would give). A
kept vector answers at once; nothing else about it is seen by the caller, which
gets its own copy. What the cache holds is vectors of texts, not whose they were.

**Batched**: asks wait in one queue; a worker takes every waiting ask (at most
``batch_max``) and embeds them in one call of the embedder's ``embed_queries``
where it has one. There is no waiting window: under load the queue fills while
the workers are busy, and an idle server embeds each ask at once. The embedder
decides what it may run together without changing a vector (equal-length texts on
the fp32 graph; the int8 graph quantises its activations over the whole batch, so it
runs each text alone: :meth:`~graphsvc.embed.onnx_only.OnnxOnlyEmbedder.embed_queries`).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict, deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from graphsvc.embed.sentence import Embedder, embed_query
from graphsvc.telemetry.request_scope import RequestScope, current
from graphsvc.telemetry.stages import add as add_stage

__all__ = ["configure", "embed_soon"]

_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="graphsvc-embed")
_LOCK = threading.Lock()
# GRAPHSVC_QUERY_CACHE and GRAPHSVC_QUERY_BATCH (graphsvc.settings.EmbeddingSettings).
_LIMITS = {"cache_size": 1024, "batch_max": 16}


@dataclass(frozen=True)
class _Ask:
    embedder: Embedder
    text: str
    future: Future[list[float]]
    scope: RequestScope | None


_WAITING: deque[_Ask] = deque()
# Per embedder: (model name, text) → vector, least recently used first.
_KEPT: weakref.WeakKeyDictionary[Embedder, OrderedDict[tuple[str, str], tuple[float, ...]]] = (
    weakref.WeakKeyDictionary()
)


def configure(cache_size: int, batch_max: int) -> None:
    """Set the cache's size per embedder (0: none) and the most texts per batch (1:
    each alone); the serving process's settings."""
    with _LOCK:
        _LIMITS["cache_size"] = max(0, cache_size)
        _LIMITS["batch_max"] = max(1, batch_max)
        if not _LIMITS["cache_size"]:
            _KEPT.clear()


def embed_soon(embedder: Embedder, text: str) -> Future[list[float]]:
    """Start embedding ``text``; ``.result()`` waits for it (and re-raises its error)."""
    future: Future[list[float]] = Future()
    kept = _kept(embedder, text)
    if kept is not None:
        future.set_result(list(kept))
        return future
    with _LOCK:
        _WAITING.append(_Ask(embedder, text, future, current()))
    _POOL.submit(_drain)
    return future


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
    size = _LIMITS["cache_size"]
    if not size:
        return
    with _LOCK:
        try:
            kept = _KEPT.setdefault(embedder, OrderedDict())
        except TypeError:
            return
        key = (embedder.model_name, text)
        kept[key] = tuple(vector)
        kept.move_to_end(key)
        while len(kept) > size:
            kept.popitem(last=False)


def _drain() -> None:
    """Embed every waiting ask (at most ``batch_max``), one call per embedder."""
    with _LOCK:
        asks = [_WAITING.popleft() for _ in range(min(len(_WAITING), _LIMITS["batch_max"]))]
    live = [a for a in asks if a.future.set_running_or_notify_cancel()]
    by_embedder: dict[int, list[_Ask]] = {}
    for ask in live:
        by_embedder.setdefault(id(ask.embedder), []).append(ask)
    for group in by_embedder.values():
        _embed_group(group)


def _embed_group(group: list[_Ask]) -> None:
    embedder = group[0].embedder
    t0 = time.thread_time_ns()
    try:
        vectors = _embed_queries(embedder, [a.text for a in group])
    except BaseException as exc:  # each waiting caller re-raises it
        for ask in group:
            ask.future.set_exception(exc)
        return
    share = (time.thread_time_ns() - t0) // len(group)
    for ask, vector in zip(group, vectors, strict=True):
        _keep(embedder, ask.text, vector)
        add_stage(ask.scope, "embed", share)
        ask.future.set_result(vector)


def _embed_queries(embedder: Embedder, texts: list[str]) -> list[list[float]]:
    """The query vectors of ``texts``: in one call where the embedder batches them."""
    batch = getattr(embedder, "embed_queries", None)
    if batch is not None and len(texts) > 1:
        vectors: list[list[float]] = batch(texts)
        return vectors
    return [embed_query(embedder, t) for t in texts]
