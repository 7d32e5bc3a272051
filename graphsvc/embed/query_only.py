"""A query encoder that needs neither PyTorch nor sentence-transformers.

``graphsvc search`` / ``read`` embed one query and exit. Loading the full embedder
(:class:`~graphsvc.embed.sentence.SentenceEmbedder`) imports torch and
sentence-transformers, ~10-20 s of CPU on a busy 2-core machine, for a query that
onnxruntime answers in milliseconds. The ONNX graph that the full embedder exported
once is cached under ``<cache>/onnx/<key>-<weights digest>.onnx`` (and its int8 copy
next to it, :mod:`graphsvc.embed.onnx_query`); this encoder opens that file with
onnxruntime and tokenises with the ``tokenizers`` library from the model's own
``tokenizer.json``, truncated to the model's ``max_seq_length`` like the
sentence-transformers path. The vectors equal the full embedder's query vectors
(tests/unit/test_query_only.py).

When the graph is not cached yet (a fresh machine), :func:`open_query_encoder`
returns ``None`` and the caller loads the full embedder, which exports it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from graphsvc.embed.models import ModelSpec

__all__ = ["QueryOnlyEncoder", "cached_graph", "open_query_encoder"]


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


class QueryOnlyEncoder:
    """Embeds queries with onnxruntime and ``tokenizers`` alone.

    Args:
        graph: the cached ONNX graph (mean pooling and normalisation inside).
        model_dir: the sentence-transformers folder (``tokenizer.json``, its config).
        model_name: the model's full name (the Embedder protocol's ``model_name``).
        dimension: the length of its vectors.
        query_precision: ``int8`` or ``fp32`` (what ``graph`` is).
    """

    query_runtime = "onnxruntime"

    def __init__(
        self,
        graph: Path,
        model_dir: Path,
        model_name: str,
        dimension: int,
        query_precision: str,
    ) -> None:
        from tokenizers import Tokenizer

        from graphsvc.embed.onnx_query import session_of

        self.model_name = model_name
        self.dimension = dimension
        self.query_precision = query_precision
        self._session = session_of(graph)
        self._inputs = [i.name for i in self._session.get_inputs()]
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # Like the sentence-transformers path: no padding (one text), truncated at
        # the model's max_seq_length (tokenizer.json may carry another length).
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=_max_seq_length(model_dir))
        self._tokenizer = tokenizer

    def embed_query(self, text: str) -> list[float]:
        """The unit embedding of a search query."""
        enc = self._tokenizer.encode(text)
        columns = {
            "input_ids": enc.ids,
            "attention_mask": enc.attention_mask,
            "token_type_ids": enc.type_ids,
        }
        feed = {name: np.asarray([columns[name]], dtype=np.int64) for name in self._inputs}
        out: Any = self._session.run(None, feed)[0][0]
        return [float(x) for x in out]


def _max_seq_length(model_dir: Path) -> int:
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


def open_query_encoder(
    spec: ModelSpec, cache_dir: Path, query_precision: str
) -> QueryOnlyEncoder | None:
    """A :class:`QueryOnlyEncoder` on the cached graph, or ``None`` when there is none
    (or it cannot be opened): the caller then loads the full embedder."""
    try:
        graph = cached_graph(spec, cache_dir, query_precision)
        if graph is None:
            return None
        return QueryOnlyEncoder(
            graph, spec.locate(cache_dir), spec.name, spec.dimension, query_precision
        )
    except Exception:  # any failure here only costs the fast path
        return None
