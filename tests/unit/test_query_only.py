"""The query-only encoder: the full embedder's query vectors without torch (API-4).

``graphsvc search`` / ``read`` embed one query per process; the query-only encoder
runs the cached ONNX graph with onnxruntime and ``tokenizers`` alone. These tests
check that its vectors are the full embedder's, that a fresh process embedding a
query through the composition root's :class:`LazyEmbedder` never imports torch or
sentence-transformers, and that without a cached graph it steps aside.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from graphsvc.embed import get_embedder
from graphsvc.embed.models import MODELS
from graphsvc.embed.query_only import cached_graph, open_query_encoder
from graphsvc.settings import default_cache_dir

_QUERIES = [
    "zorblax lattice annealed",
    "Wer hat die Kühe gemolken? 牛",
    "kiln " * 400,  # past max_seq_length: truncated like the PyTorch path
    "",
]


@pytest.fixture(scope="module")
def full() -> object:
    """The full embedder (exports the ONNX graph into the cache if it is not there)."""
    return get_embedder()


@pytest.mark.req("API-4")
def test_query_vectors_are_the_full_embedders(full: object) -> None:
    spec = MODELS["all-MiniLM-L6-v2"]
    for precision in ("int8", "fp32"):
        reference = get_embedder(query_precision="fp32") if precision == "fp32" else full
        encoder = open_query_encoder(spec, default_cache_dir(), precision)
        assert encoder is not None, precision
        assert (encoder.model_name, encoder.dimension) == (spec.name, spec.dimension)
        for q in _QUERIES:
            mine = np.asarray(encoder.embed_query(q))
            theirs = np.asarray(reference.embed_query(q))  # type: ignore[attr-defined]
            assert mine.shape == (spec.dimension,)
            assert np.max(np.abs(mine - theirs)) < 1e-5, (precision, q[:20])


_CHILD = """
import json, sys
from graphsvc.embed.lazy import LazyEmbedder
e = LazyEmbedder()
v = e.embed_query("zorblax lattice annealed")
heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules)
print(json.dumps({"dim": len(v), "heavy": heavy, "loaded": e.loaded}))
"""


@pytest.mark.req("API-4")
def test_a_fresh_process_embeds_a_query_without_torch(full: object) -> None:
    del full  # only makes sure the graph is cached
    run = subprocess.run(
        [sys.executable, "-c", _CHILD], capture_output=True, text=True, timeout=120, check=True
    )
    out = json.loads(run.stdout)
    assert out == {"dim": 384, "heavy": [], "loaded": False}, run.stderr


@pytest.mark.req("API-4")
def test_without_a_cached_graph_the_query_only_encoder_steps_aside(tmp_path: Path) -> None:
    spec = MODELS["all-MiniLM-L6-v2"]
    assert cached_graph(spec, tmp_path, "int8") is None
    assert open_query_encoder(spec, tmp_path, "int8") is None
