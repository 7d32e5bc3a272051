"""The embedding model switch: a database records its model, a process of another
model refuses to start, and ``graphsvc reembed`` moves a database to another model
(resumable, the vector index re-created with the new dimension).

These tests change the whole database's embeddings, so they run on a Neo4j of
their own, not the session's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from graphsvc.core.binding import Binding
from graphsvc.core.requests import SearchRequest
from graphsvc.embed import get_embedder
from graphsvc.errors import EmbeddingModelMismatchError, InvalidInputError
from graphsvc.inputs.models import parse_changes
from graphsvc.localdb import LocalNeo4j
from graphsvc.ops.embedding_model import reembed
from graphsvc.runtime import build_service
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.store import replicas
from graphsvc.store.connection import Database
from graphsvc.store.embedding_model import model_record, vector_index_dimension
from graphsvc.store.replicas import Registration

MINILM, MPNET, BGE = "all-MiniLM-L6-v2", "all-mpnet-base-v2", "bge-small-en-v1.5"
TEXTS = {
    "tide": "The harbour master logs the spring tides every morning at six.",
    "bread": "Our bakery proofs sourdough overnight in a cold cellar.",
    "comet": "Astronomers tracked the comet's tail across the winter sky.",
}


@pytest.fixture(scope="module")
def own_neo4j(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    state = tmp_path_factory.mktemp("reembed-neo4j")
    local = LocalNeo4j(Settings.from_env(state_dir=state), name="reembed", port=0, auth=False)
    inst = local.start(die_with_parent=True)
    try:
        yield Settings.from_env(
            neo4j_uri=inst.uri,
            state_dir=state,
            key_file=str(state / "signing-key.json"),
            secret_file=str(state / "server-secret"),
        )
    finally:
        local.stop()


def _service(settings: Settings, model: str) -> tuple[Service, Database]:
    service, runtime = build_service(
        settings.with_(embedding_model=model), progress=lambda _m: None
    )
    return service, runtime.db


def _write_texts(service: Service, human: Binding) -> None:
    changes = [
        {"id": k, "op": "create", "content": {"text": t, "links": []}, "sources": []}
        for k, t in TEXTS.items()
    ]
    service.write(human, parse_changes(changes))


def _assert_moved(
    settings: Settings, service: Service, db: Database, human: Binding, model: str, dim: int
) -> None:
    """Every head holds ``model``'s vector of its body, search finds by it, and a
    MiniLM process is refused; closes ``db``."""
    embedder = get_embedder(model)
    for text, vector in _embeddings(db).items():
        assert len(vector) == dim
        assert float(np.abs(np.array(vector) - np.array(embedder.embed([text])[0])).max()) < 1e-5
    result = service.search(human, SearchRequest("when are the tides logged at the harbour?"))
    assert result.hits[0].atom.text == TEXTS["tide"]
    assert not result.diagnostics["acquisition"]["missingSignals"]
    with pytest.raises(EmbeddingModelMismatchError):
        _service(settings, MINILM)
    db.close()


def _embeddings(db: Database) -> dict[str, list[float]]:
    rows, _, _ = db.driver.execute_query(
        "MATCH (r:Revision:Current) WHERE r.embedding IS NOT NULL "
        "RETURN r.text AS text, r.embedding AS e",
        database_=db.database,
    )
    return {r["text"]: list(r["e"]) for r in rows}


def _texts(db: Database, subject: str) -> dict[str, str]:
    rows, _, _ = db.driver.execute_query(
        "MATCH (r:Revision:Current {subject: $s}) RETURN r.atomId AS a, r.text AS t",
        {"s": subject},
        database_=db.database,
    )
    return {r["a"]: r["t"] for r in rows}


def _cli(settings: Settings, *args: str) -> tuple[int, dict[str, object], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHSVC_")}
    env.update(
        GRAPHSVC_NEO4J_URI=settings.neo4j.uri,
        GRAPHSVC_STATE_DIR=str(settings.paths.state_dir),
        GRAPHSVC_KEY_FILE=settings.paths.key_file,
        GRAPHSVC_SECRET_FILE=settings.paths.secret_file,
    )
    proc = subprocess.run(
        [sys.executable, "-m", "graphsvc", "reembed", *args, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return proc.returncode, json.loads(proc.stdout or "{}"), proc.stderr


@pytest.mark.req("ACT-1", "CUR-1")
def test_model_switch_refuses_mixing_and_reembed_moves_the_database(
    own_neo4j: Settings,
) -> None:
    settings = own_neo4j
    # An empty database takes the configured model, index dimension included...
    _, db = _service(settings, MPNET)
    assert vector_index_dimension(db) == 768
    assert model_record(db).name == "sentence-transformers/all-mpnet-base-v2"
    db.close()
    # ... and, still without embeddings, the next process's model.
    service, db = _service(settings, MINILM)
    assert vector_index_dimension(db) == 384
    subject = f"reembed-{uuid.uuid4().hex[:8]}"
    human = Binding(subject, "default", "human", "alice")
    _write_texts(service, human)
    before = _embeddings(db)
    assert {len(v) for v in before.values()} == {384}
    first = service.search(human, SearchRequest("when are the tides logged at the harbour?"))
    assert first.hits[0].atom.text == TEXTS["tide"]

    # A process of the other model refuses to start on these embeddings.
    with pytest.raises(EmbeddingModelMismatchError) as refused:
        _service(settings, MPNET)
    assert refused.value.code == "EMBEDDING_MODEL_MISMATCH"
    assert "graphsvc reembed --model all-mpnet-base-v2" in str(refused.value)

    # An interrupted reembed: one head of three done, the rest still MiniLM's.
    part = reembed(db, get_embedder(MPNET), batch=1, grace_s=0.0, stop_after_batches=1)
    assert (part.finished, part.reembedded, part.total) == (False, 1, 3)
    assert "index" not in part.to_json()
    mixed = _embeddings(db)
    assert sorted(len(v) for v in mixed.values()) == [384, 384, 768]
    moved = {text for text, v in mixed.items() if len(v) == 768}
    # The MiniLM process still running meanwhile searches without failing: the
    # re-embedded head (another length) has no semantic signal, the others do.
    texts = _texts(db, subject)
    for query in ("sourdough proofing in the cellar", "the comet's tail in the sky"):
        during = service.search(human, SearchRequest(query))
        missing = during.diagnostics["acquisition"]["missingSignals"]
        assert {texts[a] for a, sig in missing.items() if "semantic" in sig} <= moved
        kept = [h.atom.text for h in during.hits if h.atom.text not in moved]
        assert kept and all(texts[a] in moved for a in missing)
    # No process starts on an unfinished reembed, whatever its model.
    for model in (MINILM, MPNET):
        with pytest.raises(EmbeddingModelMismatchError, match="unfinished"):
            _service(settings, model)
    # A live `graphsvc serve` of the database (its replica lease) stops a reembed
    # before it touches anything; its released lease lets it go on.
    serving = Registration("r-reembed", "fp", "host-a", 4242, lease_s=30.0, forget_s=60.0)
    assert replicas.register(db, serving, time.time()) == []
    with pytest.raises(InvalidInputError, match="host-a pid 4242"):
        reembed(db, get_embedder(MPNET), grace_s=0.0)
    assert sorted(len(v) for v in _embeddings(db).values()) == [384, 384, 768]
    replicas.release(db, "r-reembed")
    db.close()

    # The CLI resumes it, and finishes: every head embedded by mpnet, the index
    # re-created with 768 dimensions.
    code, report, err = _cli(settings, "--model", MPNET, "--batch", "2")
    assert code == 0, err
    assert (report["reembedded"], report["total"], report["resumed"]) == (2, 3, True)
    assert report["index"]["entries"] == 3  # type: ignore[index]
    assert "reembed:" in err  # progress lines on stderr

    service, db = _service(settings, MPNET)
    assert vector_index_dimension(db) == 768
    record = model_record(db)
    assert (record.name, record.dimension, record.migrating_to) == (
        "sentence-transformers/all-mpnet-base-v2",
        768,
        None,
    )
    _assert_moved(settings, service, db, human, MPNET, 768)

    # Nothing left to do: exit 1 with the reason.
    code, report, _ = _cli(settings, "--model", MPNET)
    assert code == 1 and report["reembedded"] == 0


def test_unknown_model_is_refused_before_neo4j_starts(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHSVC_")}
    env["GRAPHSVC_STATE_DIR"] = str(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "graphsvc", "reembed", "--model", "word2vec", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 8
    assert json.loads(proc.stdout)["error"] == "INVALID_INPUT"
    assert not (tmp_path / "neo4j").exists()


def _minilm_service(settings: Settings) -> tuple[Service, Database]:
    """A process of all-MiniLM-L6-v2 on the module's database (moved back to MiniLM
    first when an earlier test left it on another model)."""
    try:
        return _service(settings, MINILM)
    except EmbeddingModelMismatchError:
        code, _, err = _cli(settings, "--model", MINILM)
        assert code == 0, err
        return _service(settings, MINILM)


@pytest.mark.req("ACT-1", "CUR-1")
def test_a_minilm_database_refuses_a_bge_process_until_reembed(own_neo4j: Settings) -> None:
    settings = own_neo4j
    service, db = _minilm_service(settings)
    subject = f"bge-{uuid.uuid4().hex[:8]}"
    human = Binding(subject, "default", "human", "alice")
    _write_texts(service, human)
    db.close()
    with pytest.raises(EmbeddingModelMismatchError) as refused:
        _service(settings, BGE)
    assert "graphsvc reembed --model bge-small-en-v1.5" in str(refused.value)

    code, report, err = _cli(settings, "--model", BGE)
    assert code == 0, err
    assert report["reembedded"] == report["total"]

    service, db = _service(settings, BGE)
    record = model_record(db)
    assert (record.name, record.dimension) == ("BAAI/bge-small-en-v1.5+cls+query-prefix", 384)
    assert set(TEXTS.values()) <= set(_embeddings(db))
    # Bodies carry no query prefix: each stored vector is the body's own.
    _assert_moved(settings, service, db, human, BGE, 384)
