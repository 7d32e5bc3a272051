"""The embedding model registry (GRAPHSVC_EMBEDDING_MODEL) and the mpnet unpacking."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphsvc.embed import models
from graphsvc.embed.lazy import LazyEmbedder
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
