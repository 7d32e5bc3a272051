"""Query embeddings computed beside the first database round trips.

A read's fulltext query and purge check do not need the query embedding, so the
embedding runs in a worker thread meanwhile (torch releases the GIL while it
computes; Neo4j is another process). Two workers: a concurrent request never
queues behind another's embedding for long.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

from graphsvc.embed.sentence import Embedder, embed_query

__all__ = ["embed_soon"]

_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="graphsvc-embed")


def _one(embedder: Embedder, text: str) -> list[float]:
    return embed_query(embedder, text)


def embed_soon(embedder: Embedder, text: str) -> Future[list[float]]:
    """Start embedding ``text``; ``.result()`` waits for it (and re-raises its error)."""
    return _POOL.submit(_one, embedder, text)
