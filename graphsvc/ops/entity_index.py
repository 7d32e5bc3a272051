"""The database's entity extractor: checked at start, moved by ``index rebuild --entities``.

**At start** (:func:`ensure_entity_extractor`, ENT-1): the database records the
extractor version its entity index comes from (``GraphsvcMeta {key:
'entityExtractor'}``). A process with another extractor would add mentions another
extractor would not and leave the old ones, so it refuses to start
(ENTITY_EXTRACTOR_MISMATCH) and names the ways out. So does a process with the
index off (``GRAPHSVC_ENTITIES=off``) on a database that has one: its writes would
leave the index stale. A database without a record takes the configured
extractor; heads written before it (a database from before the entity index) are
*unindexed* until ``graphsvc index rebuild --entities`` indexes them; search
diagnostics count the unindexed heads of each evaluation (ENT-2).

**Rebuild** (:func:`rebuild_entities`): the record names the target and a run id
(``migratingTo``, ``runId``); heads are indexed in batches, each batch one write
transaction that replaces the mentions of its heads' atoms and marks the heads with
the target's version, so a killed run resumes where it stopped (the marked heads are
done) and a head written meanwhile by a process of the old extractor is redone; when
no head is left, the record names the target. Progress goes to ``progress`` (stderr
in the CLI), one line per batch.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphsvc.entities import EntityExtractor
from graphsvc.errors import EntityExtractorMismatchError, InvalidInputError
from graphsvc.store import entities as store
from graphsvc.store import replicas
from graphsvc.store.connection import Database
from graphsvc.store.embedding_model import recorded_dimension
from graphsvc.store.entities import HeadMentions, head_mentions

__all__ = [
    "EntityRebuild",
    "ensure_entity_extractor",
    "rebuild_entities",
    "rebuild_entity_index",
]


@dataclass(frozen=True)
class EntityRebuild:
    """What an entity index rebuild did: the heads ``extractor`` indexed this run,
    those still ``pending`` of ``total``, and whether the index is now built."""

    extractor: str
    run_id: str
    resumed: bool
    indexed: int
    pending: int
    total: int
    finished: bool
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            "extractor": self.extractor,
            "runId": self.run_id,
            "resumed": self.resumed,
            "indexed": self.indexed,
            "pending": self.pending,
            "total": self.total,
            "finished": self.finished,
            "seconds": self.seconds,
        }


_REBUILD = "graphsvc index rebuild --entities"


def ensure_entity_extractor(
    db: Database,
    extractor: EntityExtractor | None,
    *,
    progress: Callable[[str], None] | None = None,
) -> None:
    """Make sure the database's entity index is ``extractor``'s (see the module's notes).

    Raises:
        EntityExtractorMismatchError: it is another extractor's, or a rebuild to
            another is unfinished, or the index is off in a database that has one.
    """
    say = progress or (lambda _msg: None)
    record = store.extractor_record(db, None if extractor is None else extractor.version)
    recorded = record.migrating_to or record.version
    if extractor is None:
        if recorded is not None and record.has_entities:
            raise EntityExtractorMismatchError(
                f"the database has an entity index (built by {recorded}) and this process "
                "runs with GRAPHSVC_ENTITIES=off, so its writes would leave it stale: "
                "set GRAPHSVC_ENTITIES=rules",
                details={"recorded": recorded, "configured": None},
            )
        return
    version = extractor.version
    if record.migrating_to is not None and record.migrating_to != version:
        raise EntityExtractorMismatchError(
            f"a rebuild of the entity index by {record.migrating_to} is unfinished; finish "
            f"it with the extractor it was started with (`{_REBUILD}`)",
            details={"recorded": record.version, "migratingTo": record.migrating_to},
        )
    if record.version is not None and record.version != version and record.migrating_to is None:
        raise EntityExtractorMismatchError(
            f"the database's entity index was built by {record.version}, this process runs "
            f"{version}: configure the recorded extractor, or stop every graphsvc process "
            f"of this database and run `{_REBUILD}`",
            details={"recorded": record.version, "configured": version},
        )
    if record.version is None and record.migrating_to is None:
        store.record_extractor(db, version)
    if record.unindexed:
        say(
            "graphsvc: some current heads have no entity mentions yet (written before the "
            f"entity index); run `{_REBUILD}` once to index them"
        )


def rebuild_entities(
    db: Database,
    extractor: EntityExtractor,
    *,
    subject: str | None = None,
    batch: int = 500,
    progress: Callable[[str], None] | None = None,
    stop_after_batches: int | None = None,
    clock: Callable[[], float] = time.time,
) -> EntityRebuild:
    """(Re-)derive the entity index of every current head with ``extractor``.

    Args:
        subject: only this subject's heads (the record moves once no head of any
            subject is left).
        batch: heads per write transaction.
        progress: one line per batch.
        stop_after_batches: stop (unfinished, resumable) after this many batches.
        clock: epoch seconds (the serving processes' leases).

    Returns:
        The heads indexed this run and those left.

    Raises:
        InvalidInputError: a bad batch size, or another extractor's index while a
            ``graphsvc serve`` of this database is live.
    """
    if not 1 <= batch <= 10_000:
        raise InvalidInputError("batch must be in 1..10000", details={"batch": batch})
    say = progress or (lambda _msg: None)
    t0 = time.monotonic()
    version = extractor.version
    record = store.extractor_record(db, version)
    if (record.migrating_to or record.version) not in (None, version):
        _refuse_while_served(db, clock())
    run_id, resumed = store.begin_rebuild(db, version, uuid.uuid4().hex)
    pending, total = store.count_pending(db, version, subject)
    what = f"subject {subject}" if subject else "every subject"
    say(f"graphsvc: entities: {pending} of {total} heads of {what} to index ({version})")
    done = _index_pending(db, extractor, subject, run_id, batch, pending, stop_after_batches, say)
    left, total = store.count_pending(db, version, subject)
    everywhere, _ = store.count_pending(db, version, None) if subject else (left, total)
    finished = everywhere == 0
    if finished:
        store.record_extractor(db, version)
        say(f"graphsvc: entities: the index is built by {version}")
    elif left:
        say(f"graphsvc: entities: stopped with {left} heads left; run it again to finish")
    return EntityRebuild(
        extractor=version,
        run_id=run_id,
        resumed=resumed,
        indexed=done,
        pending=left,
        total=total,
        finished=finished,
        seconds=round(time.monotonic() - t0, 3),
    )


def _refuse_while_served(db: Database, now: float) -> None:
    """Raises InvalidInputError while a ``graphsvc serve`` holds a live lease: it runs
    the other extractor, so its writes would keep adding that extractor's mentions."""
    serving = replicas.live_replicas(db, now)
    if serving:
        raise InvalidInputError(
            f"{len(serving)} graphsvc serve process(es) of another extractor use this "
            "database; stop them first",
            details={"replicas": [r.replica_id for r in serving]},
        )


def _index_pending(
    db: Database,
    extractor: EntityExtractor,
    subject: str | None,
    run_id: str,
    batch: int,
    pending: int,
    stop_after_batches: int | None,
    say: Callable[[str], None],
) -> int:
    """Index the heads ``extractor`` has not indexed, batch by batch; how many."""
    version = extractor.version
    done = batches = 0
    started = time.monotonic()
    while stop_after_batches is None or batches < stop_after_batches:
        heads = store.pending_heads(db, version, subject, batch)
        if not heads:
            break
        found = extractor.extract([str(h["text"] or "") for h in heads])
        by_subject: dict[str, list[HeadMentions]] = {}
        for head, mentions in zip(heads, found, strict=True):
            by_subject.setdefault(head["subject"], []).append(
                head_mentions(head["atomId"], int(head["rev"]), mentions)
            )
        store.index_batch(db, by_subject, version, run_id)
        done += len(heads)
        batches += 1
        rate = done / max(time.monotonic() - started, 1e-9)
        say(f"graphsvc: entities: {done}/{pending} heads ({rate:.0f}/s)")
    return done


def rebuild_entity_index(
    db: Database,
    extractor: EntityExtractor,
    *,
    subject: str | None,
    batch: int,
    progress: Callable[[str], None],
) -> EntityRebuild:
    """``graphsvc index rebuild --entities`` (ENT-5): the schema first (its entity
    constraints), at the embedding dimension the database records, then
    :func:`rebuild_entities`.

    Raises:
        InvalidInputError: as :func:`rebuild_entities` raises.
    """
    db.apply_schema(embedding_dimension=recorded_dimension(db))
    return rebuild_entities(db, extractor, subject=subject, batch=batch, progress=progress)
