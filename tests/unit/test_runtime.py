"""The composition root: the Service writes no file, the root reads the secret once,
and the embedding model loads only when something embeds."""

from __future__ import annotations

import stat
from collections.abc import Sequence
from pathlib import Path

import pytest

from graphsvc.embed.lazy import LazyEmbedder
from graphsvc.embed.sentence import DIMENSION, MODEL_NAME
from graphsvc.errors import InvalidInputError, SignerError
from graphsvc.runtime import Parts, job_worker_of, secret_of, service_for, signing_key_path
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.store.connection import Database
from graphsvc.tokenizer import get_tokenizer


class _Unit:
    """A tiny real embedder: every text becomes the same unit vector."""

    model_name = MODEL_NAME
    dimension = DIMENSION
    query_runtime = "test"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0] + [0.0] * (DIMENSION - 1) for _ in texts]


def _settings(tmp_path: Path) -> Settings:
    return Settings.from_env(neo4j_uri="bolt://127.0.0.1:9", state_dir=tmp_path / "state")


def _unreachable(settings: Settings) -> Database:
    # The driver connects on first use only; nothing here uses it.
    return Database.for_settings(settings, settings.neo4j.uri, "neo4j", "")


def test_lazy_embedder_loads_the_model_on_the_first_embed_only() -> None:
    loads: list[int] = []

    def load() -> _Unit:
        loads.append(1)
        return _Unit()

    lazy = LazyEmbedder(load)
    assert (lazy.model_name, lazy.dimension) == (MODEL_NAME, DIMENSION)
    assert lazy.embed([]) == []
    assert loads == [] and lazy.loaded is False
    vectors = lazy.embed(["a", "b"])
    assert len(vectors) == 2 and len(vectors[0]) == DIMENSION
    lazy.embed(["c"])
    assert lazy.query_runtime == "test"
    assert loads == [1] and lazy.loaded is True


def test_service_constructor_writes_no_file(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    db = _unreachable(settings)
    try:
        parts = Parts(settings, _Unit(), get_tokenizer(), secret=b"k" * 32)
        service = Service(
            settings,
            db,
            _Unit(),
            get_tokenizer(),
            secret=b"k" * 32,
            signing_keys=parts.signing_keys,
            verification_keys=parts.verification_keys,
            worker_of=job_worker_of,
        )
        assert service.secret == b"k" * 32
        assert not (tmp_path / "state").exists()
        other = service.with_settings(settings.with_(max_seeds=1))
        assert other.secret == service.secret and other.settings.ranking.max_seeds == 1
        assert not (tmp_path / "state").exists()
    finally:
        db.close()


def test_root_creates_the_secret_once_0600_and_reads_it_back(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    first = secret_of(settings)
    path = tmp_path / "state" / "server-secret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(first) == 32
    db = _unreachable(settings)
    try:
        service = service_for(settings, db)
        assert service.secret == first == secret_of(settings)
        assert isinstance(service.embedder, LazyEmbedder) and not service.embedder.loaded
    finally:
        db.close()
    path.chmod(0o644)
    with pytest.raises(InvalidInputError):
        secret_of(settings)


def test_signing_keys_are_created_on_first_use_and_rechecked_on_each(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    db = _unreachable(settings)
    try:
        service = service_for(settings, db, _Unit())
    finally:
        db.close()
    key_path = signing_key_path(settings)
    assert key_path == tmp_path / "state" / "signing-key.json" and not key_path.exists()
    ring = service.signing_keys()
    assert stat.S_IMODE(key_path.stat().st_mode) == 0o600
    assert service.signing_keys().active_key_id == ring.active_key_id
    key_path.chmod(0o640)
    with pytest.raises(SignerError):
        service.signing_keys()
