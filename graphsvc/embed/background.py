"""Embeddings computed beside the database round trips of the same request.

A read's fulltext query and purge check do not need the query embedding, so the
embedding runs in a worker thread meanwhile (torch releases the GIL while it
computes; Neo4j is another process). Two workers: a concurrent request never
queues behind another's embedding for long.

A write's batch of bodies is embedded the same way (``embed_batch_soon``, on a pool
of its own so a read's query never waits behind a batch) while its transaction runs
every query that does not need the vectors; the transaction waits for them last.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from graphsvc.embed.sentence import Embedder

__all__ = ["embed_batch_soon", "embed_soon"]

_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="graphsvc-embed")
_BATCH_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="graphsvc-embed-batch")


def _one(embedder: Embedder, text: str) -> list[float]:
    return embedder.embed([text])[0]


def embed_soon(embedder: Embedder, text: str) -> Future[list[float]]:
    """Start embedding ``text``; ``.result()`` waits for it (and re-raises its error)."""
    return _POOL.submit(_one, embedder, text)


def embed_batch_soon(embedder: Embedder, texts: Sequence[str]) -> Future[list[list[float]]]:
    """Start embedding ``texts`` (one call); ``.result()`` waits (and re-raises its error)."""
    return _BATCH_POOL.submit(embedder.embed, list(texts))
