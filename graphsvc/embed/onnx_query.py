"""The query path of the embedder: the same model exported to ONNX, run by onnxruntime.

A read embeds one short query; in PyTorch eager mode that is mostly operator
dispatch for six small layers, which onnxruntime avoids (figures in
docs/search-quality.md, "The embedding model"). The graph is exported once from the
PyTorch weights the package ships (``torch.onnx.export``, TorchScript exporter) with
mean pooling and L2 normalisation inside, and cached under ``~/.cache/graphsvc/onnx/`` by the
weights' digest. Texts are encoded one at a time (no padding), so the traced graph
sees exactly the shapes it was checked with. Batches of bodies run the same way,
one text per run, spread over a few threads by ``SentenceEmbedder`` (PyTorch's
batched threads wait at barriers whenever another process takes a core;
docs/ingest.md, "Why it is built this way").

The two paths agree to ~1e-7 per component (tests/unit/test_embed_onnx.py).

Queries may also run on an int8 copy of the graph (``query_precision="int8"``, the
default): ``onnxruntime.quantization.quantize_dynamic`` of the fp32 graph, weights
int8 per channel, made once next to it in the cache. Bodies always take the fp32
graph, so the stored embeddings do not change. It is the default because its
recall on the LoCoMo questions is fp32's within the paired interval at a fraction of
the time (bench/query_encoder.py, docs/performance.md#the-query-encoder-int8-against-fp32).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "QUERY_PRECISIONS",
    "OnnxQueryEncoder",
    "quantised",
    "run_sharded",
    "session_of",
    "weights_digest",
]

QUERY_PRECISIONS = ("int8", "fp32")

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def weights_digest(model_dir: Path) -> str:
    h = hashlib.sha256()
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        with open(model_dir / name, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()[:16]


def _inputs(model: Any) -> tuple[str, ...]:
    """The tokenizer outputs the transformer takes (MPNet has no token types)."""
    example = model.tokenizer(["an example query"])
    return tuple(name for name in _INPUTS if name in example)


def _export(model: Any, target: Path) -> None:
    """Export the transformer + mean pooling + normalisation to ``target`` (atomic)."""
    import torch

    bert = model[0].auto_model.eval()
    inputs = _inputs(model)

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, *tensors: Any) -> Any:
            named = dict(zip(inputs, tensors, strict=True))
            out = self.bert(**named).last_hidden_state
            weights = named["attention_mask"].unsqueeze(-1).to(out.dtype)
            pooled = (out * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    example = model.tokenizer(["an example query"], return_tensors="pt")
    axes = {name: {0: "batch", 1: "tokens"} for name in inputs}
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".onnx.tmp")
    os.close(fd)
    try:
        # The TorchScript exporter warns about traced shape checks and index ops; the
        # graph is checked against the PyTorch path by the tests instead.
        with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Pooled().eval(),
                tuple(example[name] for name in inputs),
                tmp,
                input_names=list(inputs),
                output_names=["embedding"],
                dynamic_axes={**axes, "embedding": {0: "batch"}},
                opset_version=17,
                dynamo=False,
            )
        os.replace(tmp, target)  # concurrent exporters: the last complete file wins
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


class OnnxQueryEncoder:
    """Encodes single texts with onnxruntime on one thread.

    Args:
        model: the loaded SentenceTransformer (for its tokenizer and weights).
        model_dir: the folder the weights came from (their digest names the file).
        cache_dir: where the exported graph is kept.
        key: the model's short name (names the file too).

    Raises:
        Exception: whatever onnxruntime or the export raises; the caller falls back.
    """

    def __init__(
        self,
        model: Any,
        model_dir: Path,
        cache_dir: Path,
        key: str = "all-MiniLM-L6-v2",
        query_precision: str = "int8",
    ) -> None:
        path = cache_dir / "onnx" / f"{key}-{weights_digest(model_dir)}.onnx"
        if not path.is_file():
            _export(model, path)
        self._session = session_of(path)
        self._query_session = self._session
        self.query_precision = "fp32"
        if query_precision == "int8":
            self._query_session = session_of(quantised(path))
            self.query_precision = "int8"
        self._tokenizer = model.tokenizer
        self._inputs = _inputs(model)
        self._max_tokens = int(model.max_seq_length)
        self.path = path

    def feeds(self, texts: list[str]) -> list[dict[str, np.ndarray]]:
        """Each text tokenised alone (no padding, truncated like the PyTorch path).

        The tokenizer is called from one thread only: a fast tokenizer that sets its
        truncation from two threads at once fails ("Already borrowed").
        """
        enc = self._tokenizer(texts, truncation=True, max_length=self._max_tokens)
        return [
            {name: np.asarray([enc[name][i]], dtype=np.int64) for name in self._inputs}
            for i in range(len(texts))
        ]

    def run(self, feed: dict[str, np.ndarray]) -> np.ndarray:
        """The unit embedding of one tokenised text (thread-safe, releases the GIL)."""
        out: np.ndarray = self._session.run(None, feed)[0][0]
        return out

    def encode_one(self, text: str) -> np.ndarray:
        """The unit embedding of ``text`` (truncated like the PyTorch path), fp32."""
        return self._encode(self._session, text)

    def encode_query(self, text: str) -> np.ndarray:
        """The unit embedding of a query, at ``query_precision``."""
        return self._encode(self._query_session, text)

    def _encode(self, session: Any, text: str) -> np.ndarray:
        enc = self._tokenizer(
            [text], truncation=True, max_length=self._max_tokens, return_tensors="np"
        )
        feed = {name: enc[name].astype(np.int64) for name in self._inputs}
        out: np.ndarray = session.run(None, feed)[0][0]
        return out


def run_sharded(
    run: Callable[[dict[str, np.ndarray]], np.ndarray], feeds: list[dict[str, np.ndarray]]
) -> list[np.ndarray]:
    """``run`` over every feed, in order, on up to four threads (no more than the cores
    this process may use).

    Each thread encodes its share alone (one intra-op thread, no padding), so no
    thread ever waits at a barrier for another: on a busy machine PyTorch's
    two-thread batches spent most of their time there (docs/ingest.md, "Why it is
    built this way").
    """
    workers = max(1, min(4, len(os.sched_getaffinity(0)), len(feeds) // 8))
    if workers == 1:
        return [run(f) for f in feeds]
    shares = [feeds[i::workers] for i in range(workers)]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="graphsvc-embed") as ex:
        parts = list(ex.map(lambda share: [run(f) for f in share], shares))
    out: list[np.ndarray] = [np.empty(0)] * len(feeds)
    for i, part in enumerate(parts):
        for j, vec in enumerate(part):
            out[i + j * workers] = vec
    return out


def session_of(path: Path) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def quantised(fp32: Path) -> Path:
    """The int8 copy of ``fp32`` (weights per channel), made once, atomically."""
    target = fp32.with_name(fp32.stem + "-int8.onnx")
    if target.is_file():
        return target
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    fd, tmp = tempfile.mkstemp(dir=fp32.parent, suffix=".onnx.tmp")
    os.close(fd)
    # quantize_dynamic logs a pre-processing hint through the root logger.
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        quantize_dynamic(str(fp32), tmp, weight_type=QuantType.QInt8, per_channel=True)
        os.replace(tmp, target)
    finally:
        root.setLevel(level)
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target
