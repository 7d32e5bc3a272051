"""The database's embedding model: checked at start, moved by ``graphsvc reembed``.

**At start** (:func:`ensure_embedding_model`): a database records the model its
embeddings come from. A process configured with another model would compare its
query vectors with vectors of another space (or another length), so it refuses to
start (EMBEDDING_MODEL_MISMATCH) and says which two commands resolve it: configure
the recorded model, or re-embed. A database without embeddings simply takes the
configured model (its vector index is re-created with that dimension).

**Reembed** (:func:`reembed`), run with the service stopped (it refuses while a
``graphsvc serve`` of the database holds a live replica lease):

1. the record names the target and a run id (``migratingTo``); no process starts
   meanwhile, whatever its model;
2. the vector index is dropped behind its rebuild marker (a process still running
   with the old model keeps searching: the exact scan, which gives heads of the
   other length no semantic signal);
3. every current head's body is embedded again in batches, each batch one write
   transaction that tags its heads with the run id: an interrupted run resumes
   where it stopped, and a head written meanwhile (old model, no tag) is redone;
4. the record names the target model, and the vector index is created with its
   dimension and populated (``graphsvc index rebuild``'s steps).

Cursors expire with the change (the model's name is part of the index
generation, CUR-1).
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from graphsvc.embed.sentence import Embedder
from graphsvc.errors import EmbeddingModelMismatchError, InvalidInputError
from graphsvc.ops.index import VECTOR, IndexRebuild, rebuild_index
from graphsvc.store import embedding_model as store
from graphsvc.store import indexes, replicas
from graphsvc.store.connection import Database

__all__ = ["Reembedding", "ensure_embedding_model", "reembed"]


@dataclass(frozen=True)
class Reembedding:
    """What a reembed run did: the heads it embedded with ``model`` (from the model
    ``source``), of ``total``; once finished, the vector index it rebuilt."""

    model: str
    source: str
    reembedded: int
    total: int
    seconds: float
    finished: bool
    # An unfinished earlier run was resumed.
    resumed: bool
    index: IndexRebuild | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "model": self.model,
            "from": self.source,
            "reembedded": self.reembedded,
            "total": self.total,
            "seconds": self.seconds,
            "finished": self.finished,
            "resumed": self.resumed,
        }
        if self.index is not None:
            out["index"] = self.index.to_json()
        return out


def _key_of(name: str) -> str:
    from graphsvc.embed.models import MODELS

    for spec in MODELS.values():
        if spec.name == name:
            return spec.key
    return name


def ensure_embedding_model(
    db: Database, name: str, dimension: int, *, progress: Callable[[str], None] | None = None
) -> None:
    """Make sure the database's embeddings are ``name``'s (see the module's notes).

    Raises:
        EmbeddingModelMismatchError: they are another model's, or a reembed is
            unfinished.
    """
    say = progress or (lambda _msg: None)
    record = store.model_record(db)
    if record.migrating_to is not None:
        raise EmbeddingModelMismatchError(
            f"a reembed to {record.migrating_to} is unfinished; run `graphsvc reembed "
            f"--model {_key_of(record.migrating_to)}` again to finish it",
            details={"recorded": record.name, "migratingTo": record.migrating_to},
        )
    recorded = record.effective_name or store.LEGACY_MODEL
    if record.has_embeddings and recorded != name:
        raise EmbeddingModelMismatchError(
            f"the database's embeddings come from {recorded}, this process runs {name}: "
            f"set GRAPHSVC_EMBEDDING_MODEL={_key_of(recorded)}, or stop every graphsvc "
            f"process of this database and run `graphsvc reembed --model {_key_of(name)}`",
            details={"recorded": recorded, "configured": name},
        )
    if record.name != name or record.dimension != dimension:
        store.record_model(db, name, dimension)
    have = store.vector_index_dimension(db)
    if have is not None and have != dimension:
        # Only reachable without embeddings of another model (checked above): a
        # database created empty with another model, or a reembed's index.
        say(f"graphsvc: vector index re-created with {dimension} dimensions (was {have})")
        indexes.recreate(db, indexes.VECTOR_INDEX, dimension)


def reembed(
    db: Database,
    embedder: Embedder,
    *,
    batch: int = 256,
    grace_s: float = 2.0,
    timeout_s: float = 3600.0,
    progress: Callable[[str], None] | None = None,
    stop_after_batches: int | None = None,
    clock: Callable[[], float] = time.time,
) -> Reembedding:
    """Re-embed every current head with ``embedder``'s model (see the module's notes).

    Args:
        batch: heads per write transaction.
        grace_s: seconds between setting the marker and dropping the index.
        timeout_s: seconds to wait for the re-created index.
        progress: one line per batch and per step.
        stop_after_batches: stop (unfinished, resumable) after this many batches
            (tests of the resume).
        clock: epoch seconds (for the serving processes' leases).

    Returns:
        The heads embedded this run, and, once finished, the index rebuild.

    Raises:
        InvalidInputError: bad batch size, another reembed is unfinished, or a
            ``graphsvc serve`` of this database is live.
        IndexRebuildError: the new index did not come online (the model is recorded;
            run ``graphsvc index rebuild``).
    """
    if not 1 <= batch <= 10_000:
        raise InvalidInputError("batch must be in 1..10000", details={"batch": batch})
    say = progress or (lambda _msg: None)
    t0 = time.monotonic()
    record = store.model_record(db)
    target, dimension = embedder.model_name, embedder.dimension
    source = record.effective_name or target
    _refuse_another_unfinished(record, target)
    if record.migrating_to is None and source == target:
        say(f"graphsvc: the embeddings already come from {target}; nothing to do")
        ensure_embedding_model(db, target, dimension, progress=say)
        seconds = round(time.monotonic() - t0, 3)
        return Reembedding(target, source, 0, 0, seconds, finished=True, resumed=False)
    _refuse_while_served(db, clock())
    resumed = record.migrating_to is not None
    run_id = _begin_run(db, record, source, target, grace_s=grace_s, clock=clock)
    pending, total = store.count_pending(db, run_id)
    say(f"graphsvc: reembed {source} -> {target}: {pending} of {total} heads to embed")
    done = _embed_pending(db, embedder, run_id, batch, pending, stop_after_batches, say)
    left, total = store.count_pending(db, run_id)
    report = Reembedding(target, source, done, total, 0.0, finished=left == 0, resumed=resumed)
    if left:
        say(f"graphsvc: reembed stopped with {left} heads left; run it again to finish")
        return dataclasses.replace(report, seconds=round(time.monotonic() - t0, 3))
    store.record_model(db, target, dimension)
    index = rebuild_index(db, VECTOR, grace_s=0.0, timeout_s=timeout_s, progress=say)
    return dataclasses.replace(report, index=index, seconds=round(time.monotonic() - t0, 3))


def _refuse_another_unfinished(record: store.ModelRecord, target: str) -> None:
    """Raises InvalidInputError when a reembed to another model is unfinished: its
    heads are tagged with that run, so a second target would mix two spaces."""
    if record.migrating_to not in (None, target):
        raise InvalidInputError(
            f"a reembed to {record.migrating_to} is unfinished; finish it first "
            f"(graphsvc reembed --model {_key_of(record.migrating_to)})",
            details={"migratingTo": record.migrating_to},
        )


def _refuse_while_served(db: Database, now: float) -> None:
    """Raises InvalidInputError while a ``graphsvc serve`` holds a live lease: it would
    keep writing heads with the old model while the index is gone."""
    serving = replicas.live_replicas(db, now)
    if serving:
        raise InvalidInputError(
            f"{len(serving)} graphsvc serve process(es) use this database "
            f"({', '.join(f'{r.host} pid {r.pid}' for r in serving)}); stop them first "
            "(a crashed one's lease runs out after GRAPHSVC_REPLICA_LEASE_S)",
            details={"replicas": [r.replica_id for r in serving]},
        )


def _begin_run(
    db: Database,
    record: store.ModelRecord,
    source: str,
    target: str,
    *,
    grace_s: float,
    clock: Callable[[], float],
) -> str:
    """Steps 1 and 2 of the module's notes; the run's id (an unfinished run's, resumed)."""
    run_id = store.begin_reembed(
        db,
        source=source,
        source_dimension=record.dimension or store.LEGACY_DIMENSION,
        target=target,
        migration_id=uuid.uuid4().hex,
    )
    if indexes.index_state(db, indexes.VECTOR_INDEX) is not None:
        since = datetime.fromtimestamp(clock(), UTC).isoformat()
        indexes.mark_rebuild(db, indexes.VECTOR_INDEX, since)
        time.sleep(grace_s)  # searches that read no marker finish on the old index
        indexes.drop(db, indexes.VECTOR_INDEX)
    return run_id


def _embed_pending(
    db: Database,
    embedder: Embedder,
    run_id: str,
    batch: int,
    pending: int,
    stop_after_batches: int | None,
    say: Callable[[str], None],
) -> int:
    """Embed the run's pending heads batch by batch (step 3); the number updated."""
    done, batches, idle, started = 0, 0, 0, time.monotonic()
    while stop_after_batches is None or batches < stop_after_batches:
        heads = store.pending_heads(db, run_id, batch)
        if not heads:
            break
        vectors = embedder.embed([str(h["text"]) for h in heads])
        rows = [
            {"subject": h["subject"], "atomId": h["atomId"], "rev": h["rev"], "embedding": v}
            for h, v in zip(heads, vectors, strict=True)
        ]
        updated = store.set_embeddings(db, run_id, rows)
        done += updated
        batches += 1
        idle = 0 if updated else idle + 1
        if idle >= 3:  # replaced meanwhile, again and again: leave it to a rerun
            break
        rate = done / max(time.monotonic() - started, 1e-9)
        say(f"graphsvc: reembed: {done}/{pending} heads ({rate:.0f}/s)")
    return done
