"""An embedder that loads its model on the first call that needs it.

Loading all-MiniLM-L6-v2 costs seconds of CPU. The composition root
(:mod:`graphsvc.runtime`) hands every Service this wrapper, so a command that never
embeds (``purge``, ``inspect``, ``export``, a refused ``atomise``) never loads the
model; ``graphsvc serve`` loads it at start (:meth:`LazyEmbedder.load`), before the
first request.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from graphsvc.embed.models import DEFAULT_MODEL, model_spec
from graphsvc.embed.sentence import Embedder, embed_query, get_embedder

if TYPE_CHECKING:
    from graphsvc.embed.query_only import QueryOnlyEncoder

__all__ = ["LazyEmbedder"]


class LazyEmbedder:
    """The :class:`~graphsvc.embed.Embedder` protocol, the model loaded on first use.

    Args:
        load: builds the real embedder (default: the process-wide sentence model
            of ``model``).
        model: the model's key (:data:`~graphsvc.embed.models.MODELS`): its name
            and dimension are known without loading it.

    Raises:
        InvalidInputError: no such model.
    """

    def __init__(
        self,
        load: Callable[[], Embedder] | None = None,
        model: str = DEFAULT_MODEL,
        query_precision: str = "int8",
    ) -> None:
        spec = model_spec(model)
        self.model_name = spec.name
        self.dimension = spec.dimension
        self._spec = spec
        self._query_precision = query_precision
        # A caller's own loader is used as given; the default one may be skipped for
        # queries (the query-only encoder, below).
        self._query_only_allowed = load is None
        self._load = load or partial(get_embedder, spec.key, query_precision)
        self._lock = threading.Lock()
        self._real: Embedder | None = None
        self._query_only: QueryOnlyEncoder | None = None
        self._query_only_tried = False

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded."""
        return self._real is not None

    def load(self) -> Embedder:
        """The real embedder, loading it once (thread-safe).

        Raises:
            ModelLoadError: the model cannot be loaded.
        """
        real = self._real
        if real is None:
            with self._lock:
                if self._real is None:
                    self._real = self._load()
                real = self._real
        return real

    @property
    def query_runtime(self) -> str:
        """``onnxruntime`` or ``torch``: what embeds queries (loads the model)."""
        return str(getattr(self.load(), "query_runtime", "torch"))

    def embed_query(self, text: str) -> list[float]:
        """A search query's embedding: the real embedder's query path once it is loaded;
        before that, the query-only encoder on the cached ONNX graph (no torch, no
        sentence-transformers: what makes ``graphsvc search`` answer at once), or,
        without a cached graph, the real embedder loaded now."""
        if self._real is None:
            encoder = self._query_encoder()
            if encoder is not None:
                return encoder.embed_query(text)
        return embed_query(self.load(), text)

    def _query_encoder(self) -> QueryOnlyEncoder | None:
        if not self._query_only_allowed:
            return None
        with self._lock:
            if not self._query_only_tried:
                self._query_only_tried = True
                from graphsvc.embed.query_only import open_query_encoder
                from graphsvc.settings import default_cache_dir

                self._query_only = open_query_encoder(
                    self._spec, default_cache_dir(), self._query_precision
                )
        return self._query_only

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Normalised embeddings, one per text; an empty list loads nothing."""
        if not texts:
            return []
        return self.load().embed(texts)
