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

from graphsvc.embed.models import DEFAULT_MODEL, model_spec
from graphsvc.embed.sentence import Embedder, embed_query, get_embedder

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
        self._load = load or partial(get_embedder, spec.key, query_precision)
        self._lock = threading.Lock()
        self._real: Embedder | None = None

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
        """A search query's embedding (loads the embedder: with the ONNX graphs cached
        that imports neither torch nor sentence-transformers, which is what makes
        ``graphsvc search`` answer at once; :func:`~graphsvc.embed.sentence.get_embedder`)."""
        return embed_query(self.load(), text)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Normalised embeddings, one per text; an empty list loads nothing."""
        if not texts:
            return []
        return self.load().embed(texts)
