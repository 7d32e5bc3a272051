"""The embedder on the cached ONNX graphs: the full embedder's vectors without torch (API-4).

Once the full embedder has exported the graphs, every process embeds bodies and
queries with onnxruntime and ``tokenizers`` alone (graphsvc/embed/onnx_only.py).
These tests check that its vectors are the full embedder's, bodies and queries, at
both query precisions; that a fresh process embedding through the composition
root's :class:`LazyEmbedder` never imports torch or sentence-transformers; and that
without a cached graph it steps aside.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from graphsvc.embed.models import MODELS
from graphsvc.embed.onnx_only import OnnxOnlyEmbedder, cached_graph, open_onnx_embedder
from graphsvc.embed.sentence import SentenceEmbedder, get_embedder
from graphsvc.settings import default_cache_dir

_TEXTS = [
    "zorblax lattice annealed",
    "Wer hat die Kühe gemolken? 牛",
    "kiln " * 400,  # past max_seq_length: truncated like the PyTorch path
    "",
]
# Enough bodies that they are spread over threads (onnx_query.run_sharded).
_BODIES = _TEXTS + [f"INC-{i} on api-gateway, owned by team {i % 3}" for i in range(36)]


@pytest.fixture(scope="module")
def full() -> SentenceEmbedder:
    """The full embedder (exports the ONNX graphs into the cache if they are not there)."""
    return SentenceEmbedder()


@pytest.mark.req("API-4")
def test_bodies_and_queries_are_the_full_embedders(full: SentenceEmbedder) -> None:
    spec = MODELS["all-MiniLM-L6-v2"]
    for precision in ("int8", "fp32"):
        reference = full if precision == "int8" else SentenceEmbedder(query_precision="fp32")
        mine = open_onnx_embedder(spec, default_cache_dir(), precision)
        assert mine is not None, precision
        assert (mine.model_name, mine.dimension) == (spec.name, spec.dimension)
        for q in _TEXTS:
            got = np.asarray(mine.embed_query(q))
            assert got.shape == (spec.dimension,)
            assert np.max(np.abs(got - np.asarray(reference.embed_query(q)))) < 1e-5, q[:20]
        bodies = np.asarray(mine.embed(_BODIES))
        assert bodies.shape == (len(_BODIES), spec.dimension)
        assert np.max(np.abs(bodies - np.asarray(reference.embed(_BODIES)))) < 1e-5
    assert mine.embed([]) == []


@pytest.mark.req("API-4")
def test_get_embedder_takes_the_cached_graphs(full: SentenceEmbedder) -> None:
    del full  # only makes sure the graphs are cached
    assert isinstance(get_embedder(), OnnxOnlyEmbedder)


_CHILD = """
import json, sys
from graphsvc.embed.lazy import LazyEmbedder
e = LazyEmbedder()
q = e.embed_query("zorblax lattice annealed")
b = e.embed(["a body", "another body"])
heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules)
print(json.dumps({"dims": [len(q), len(b[0]), len(b[1])], "heavy": heavy}))
"""


@pytest.mark.req("API-4")
def test_a_fresh_process_embeds_queries_and_bodies_without_torch(full: SentenceEmbedder) -> None:
    del full
    run = subprocess.run(
        [sys.executable, "-c", _CHILD], capture_output=True, text=True, timeout=120, check=True
    )
    out = json.loads(run.stdout)
    assert out == {"dims": [384, 384, 384], "heavy": []}, run.stderr


@pytest.mark.req("API-4")
def test_without_a_cached_graph_the_onnx_embedder_steps_aside(tmp_path: Path) -> None:
    spec = MODELS["all-MiniLM-L6-v2"]
    assert cached_graph(spec, tmp_path, "int8") is None
    assert open_onnx_embedder(spec, tmp_path, "int8") is None
