"""Kept query vectors (graphsvc/embed/query_vectors.py) are the model's own (ACT-1).

The match signal of a search comes from its query's vector; a vector that came from
the cache, or was asked while many others were, must be the one the embedder gives
that text alone, to the bit, so that no ranking depends on what else was asked at
the same time or before. Real model (the cached ONNX graphs), both query precisions.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from graphsvc.embed import query_vectors
from graphsvc.embed.models import MODELS
from graphsvc.embed.onnx_only import OnnxOnlyEmbedder, open_onnx_embedder
from graphsvc.embed.query_vectors import configure
from graphsvc.embed.sentence import SentenceEmbedder
from graphsvc.ops.evaluate import embed_soon
from graphsvc.settings import default_cache_dir

_WORDS = "amber basalt cedar delta ember fjord garnet harbor iris jasper kelp".split()  # noqa: SIM905
# Equal and unequal token lengths, a repeat, an empty text, one past max_seq_length.
_QUERIES = [
    *(f"{a} {b} {c}" for a, b, c in zip(_WORDS, _WORDS[1:], _WORDS[2:], strict=False)),
    "amber basalt cedar",
    "Wer hat die Kühe gemolken? 牛",
    "",
    "kiln " * 400,
]


@pytest.fixture(scope="module", params=["int8", "fp32"])
def embedder(request: pytest.FixtureRequest) -> OnnxOnlyEmbedder:
    SentenceEmbedder()  # exports the ONNX graphs into the cache when they are not there
    found = open_onnx_embedder(MODELS["all-MiniLM-L6-v2"], default_cache_dir(), request.param)
    assert found is not None
    return found


@pytest.fixture(autouse=True)
def defaults() -> Iterator[None]:
    yield
    configure(1024)


@pytest.mark.req("ACT-1")
def test_concurrent_asks_get_the_vectors_asked_alone(embedder: OnnxOnlyEmbedder) -> None:
    configure(0)
    alone = {q: embedder.embed_query(q) for q in _QUERIES}
    start = threading.Barrier(8)
    got: dict[int, list[tuple[str, list[float]]]] = {}

    def asker(k: int) -> None:
        start.wait()
        futures = [(q, embed_soon(embedder, q)) for q in _QUERIES[k:] + _QUERIES[:k]]
        got[k] = [(q, f.result(timeout=60)) for q, f in futures]

    threads = [threading.Thread(target=asker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8
    for answers in got.values():
        assert all(vector == alone[q] for q, vector in answers)


@pytest.mark.req("ACT-1")
def test_a_kept_vector_is_the_models_and_the_callers_own(embedder: OnnxOnlyEmbedder) -> None:
    configure(4)
    text = "ember fjord garnet"
    first = embed_soon(embedder, text).result(timeout=60)
    kept = query_vectors._kept(embedder, text)
    assert kept is not None and list(kept) == first == embedder.embed_query(text)
    again = embed_soon(embedder, text).result(timeout=60)
    assert again == first
    again[0] = 99.0  # the caller's copy: the kept vector does not change
    assert embed_soon(embedder, text).result(timeout=60) == first
    for q in _QUERIES[5:9]:  # four more texts push the least recently used one out
        embed_soon(embedder, q).result(timeout=60)
    assert query_vectors._kept(embedder, text) is None


@pytest.mark.req("ACT-1")
def test_no_cache_keeps_nothing(embedder: OnnxOnlyEmbedder) -> None:
    configure(0)
    text = "kelp jasper iris"
    assert embed_soon(embedder, text).result(timeout=60) == embedder.embed_query(text)
    assert query_vectors._kept(embedder, text) is None
