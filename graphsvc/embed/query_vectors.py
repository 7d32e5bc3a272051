"""Query vectors, kept: the last few of each embedder, by model and text.

A query vector is a function of the model, its query precision and the text alone,
so a kept one is the one the model would give. The last ``cache_size`` of each
embedder are kept (``GRAPHSVC_QUERY_CACHE``); a kept vector answers at once, the
caller gets its own copy, and nothing but the time it took tells a kept vector from
a new one. The cache holds vectors of texts, not who asked.

**Not batched**: each query is encoded alone. Waiting queries encoded in one batch
would cost a third of the CPU but not give the same vectors: the int8 graph
quantises its activations with one scale over the whole batch (up to ~0.03 per
component apart), and the fp32 graph's kernels change with the batch's shape (~1e-7
apart for some token lengths); a search's ranking must not depend on what else was
asked at the same time (docs/performance.md, "Requests per second").

The search's own thread only submits (:func:`graphsvc.ops.evaluate.embed_soon`);
:func:`query_vector` runs in the embedding worker.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict

from graphsvc.embed.sentence import Embedder, embed_query
from graphsvc.telemetry.request_scope import RequestScope
from graphsvc.telemetry.stages import add as add_stage

__all__ = ["configure", "query_vector"]

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


def query_vector(embedder: Embedder, text: str, scope: RequestScope | None) -> list[float]:
    """The query vector of ``text``: a kept one, or one encoded now (its thread CPU
    counted as the ``embed`` stage of ``scope``) and kept.

    Raises:
        Exception: whatever the embedder raises.
    """
    kept = _kept(embedder, text)
    if kept is not None:
        return list(kept)
    t0 = time.thread_time_ns()
    vector = embed_query(embedder, text)
    add_stage(scope, "embed", time.thread_time_ns() - t0)
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
