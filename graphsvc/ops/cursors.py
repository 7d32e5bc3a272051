"""Opaque, MAC-signed cursors over frozen evaluations (CUR-1, CUR-2).

The first page of a paged operation stores its evaluation (refs and numbers,
never bodies) as an ``:Evaluation`` node and returns a cursor that binds:
the operation kind, a hash of the query and options, the caller's binding,
a hash of the ranking settings, the index generation (schema version,
embedding model and the subject's purge epoch) and an expiry. Any difference on
a later call is CURSOR_EXPIRED; so is a missing or expired evaluation.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphsvc.core.binding import Binding
from graphsvc.core.frozen_payload import decode_payload, encode_payload
from graphsvc.core.mac import open_sealed, seal
from graphsvc.errors import CursorExpiredError
from graphsvc.ops.acquisition import index_generation
from graphsvc.store import cursors as store
from graphsvc.store.connection import Database
from graphsvc.store.group_commit import GroupCommit, queue_of
from graphsvc.telemetry.request_scope import remaining_s

if TYPE_CHECKING:
    from graphsvc.settings import Settings

__all__ = [
    "CursorLimits",
    "FrozenEvaluation",
    "OpenedCursor",
    "Pager",
    "digest",
    "ranking_hash",
]

_RANKING_FIELDS = (
    "beta",
    "propagation",
    "convergence_tol",
    "role_weights",
    "max_seeds",
    "max_nodes",
    "max_edges",
    "evaluation_work",
    "packing_work",
    "candidate_oversample",
    "link_weighting",
    "entities",
    "entity_weight",
    "entity_max_degree",
    "entity_query_weight",
    "entity_anchors",
    "entity_anchor_weight",
    "similar_heads",
    "similar_weight",
)


def digest(doc: Any) -> str:
    """Short canonical hash of a JSON-able document."""
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


def ranking_hash(settings: Settings) -> str:
    """The hash of the settings a ranking depends on (a cursor binds it)."""
    return digest({f: getattr(settings.ranking, f) for f in _RANKING_FIELDS})


log = logging.getLogger("graphsvc.cursors")

# Evaluations being stored by this process (Pager.save_later), by id. One insert
# and one pop per save: atomic dict operations, no lock needed.
_SAVING: dict[str, Future[None]] = {}
# How long a later page waits for an evaluation another replica is still storing.
_SETTLE_S = 2.0


@dataclass(frozen=True)
class CursorLimits:
    """The settings a cursor depends on: its lifetime and the ranking settings' hash."""

    lifetime_s: float
    settings_hash: str

    @classmethod
    def from_settings(cls, settings: Settings) -> CursorLimits:
        return cls(settings.lifetimes.cursor_lifetime_s, ranking_hash(settings))


@dataclass(frozen=True)
class FrozenEvaluation:
    """A new frozen evaluation, before it is stored (``payload`` still a dict)."""

    subject: str
    eval_id: str
    payload: dict[str, Any]
    expires_at: float
    now: float
    purge_epoch: int = 0


@dataclass(frozen=True)
class OpenedCursor:
    """A verified cursor: the frozen evaluation it points at (``payload``, as stored:
    its shape is the operation's), that evaluation's id, the page's offset and the
    cursor's expiry (epoch seconds)."""

    payload: dict[str, Any]
    eval_id: str
    offset: int
    expires: float


@dataclass(frozen=True)
class Pager:
    """What paging by cursor uses: the store, the server secret, the clock, the cursor
    limits and the embedding model's name (part of the index generation)."""

    db: Database
    secret: bytes
    clock: Callable[[], float]
    limits: CursorLimits
    model_name: str

    def checked_generation(self, subject: str) -> str:
        """The subject's index generation now, after the purge check (one round trip).

        Raises:
            PurgePendingError: a purge in the subject has not finished (LNK-6).
        """
        return index_generation(store.subject_state(self.db, subject), self.model_name)

    def frozen(
        self, binding: Binding, payload: dict[str, Any], generation: str
    ) -> FrozenEvaluation:
        """A new frozen evaluation of ``payload`` made at index ``generation`` (stored by
        :meth:`save_later`, only while that generation's purge epoch holds)."""
        now = self.clock()
        return FrozenEvaluation(
            binding.subject,
            uuid.uuid4().hex,
            payload,
            now + self.limits.lifetime_s,
            now,
            int(generation.rsplit(":", 1)[-1]),
        )

    def save_later(self, frozen: FrozenEvaluation) -> None:
        """Store ``frozen`` on a side thread; the answer that hands out its cursor does
        not wait for the commit (no write on a search's or read's path). Evaluations
        queued while a save commits are stored together in the next transaction
        (:class:`~graphsvc.store.group_commit.GroupCommit`).

        Until the commit, this process's :meth:`open_cursor` waits for the save; another
        replica's waits for the row to appear (``_SETTLE_S``). A save that fails is
        logged; its cursor then answers CURSOR_EXPIRED ("gone"), as after a restart.
        """
        future = _save_queue(self.db).put(frozen)
        _SAVING[frozen.eval_id] = future

        def done(f: Future[None]) -> None:
            _SAVING.pop(frozen.eval_id, None)
            if not f.cancelled() and f.exception() is not None:
                log.warning(
                    "evaluation not stored; its cursor will be expired",
                    extra={"code": getattr(f.exception(), "code", "INTERNAL")},
                )

        future.add_done_callback(done)

    def save_and_cursor(
        self,
        binding: Binding,
        kind: str,
        query_hash: str,
        payload: dict[str, Any],
        offset: int,
        generation: str,
    ) -> str:
        """The cursor of the page at ``offset``, its frozen evaluation stored behind it
        (:meth:`save_later`: after the answer, not before).

        ``generation`` is the index generation read with the evaluation: if a purge
        moved it since, the cursor is already stale and later pages say so.
        """
        frozen = self.frozen(binding, payload, generation)
        self.save_later(frozen)
        return self.next_cursor(
            binding, kind, query_hash, frozen.eval_id, offset, frozen.expires_at, generation
        )

    def next_cursor(
        self,
        binding: Binding,
        kind: str,
        query_hash: str,
        eval_id: str,
        offset: int,
        expires: float,
        generation: str,
    ) -> str:
        """A cursor for another page of an already stored evaluation."""
        return seal(
            self.secret,
            "cursor",
            {
                "k": kind,
                "e": eval_id,
                "o": offset,
                "q": query_hash,
                "b": digest(binding.scope()),
                "s": self.limits.settings_hash,
                "g": generation,
                "x": expires,
            },
        )

    def _load(self, subject: str, eval_id: str) -> str | bytes | None:
        """The stored evaluation, once its save (here or on another replica) is done."""
        _wait_saving(eval_id)
        payload = store.load_evaluation(self.db, subject, eval_id)
        settle = time.monotonic() + _SETTLE_S
        while payload is None and time.monotonic() < settle:
            time.sleep(0.05)  # stored later by another replica's save_later
            payload = store.load_evaluation(self.db, subject, eval_id)
        return payload

    def open_cursor(
        self, binding: Binding, kind: str, cursor: str, query_hash: str, generation: str
    ) -> OpenedCursor:
        """Verify a cursor and load its evaluation.

        ``generation`` is the subject's index generation now (see
        :meth:`checked_generation`).

        Raises:
            CursorExpiredError: forged, of another operation/query/options/binding/
                settings/index generation, expired, or its evaluation is gone.
        """
        claims = open_sealed(self.secret, "cursor", cursor)
        checks = {
            "k": kind,
            "q": query_hash,
            "b": digest(binding.scope()),
            "s": self.limits.settings_hash,
            "g": generation,
        }
        for key, expected in checks.items():
            if claims.get(key) != expected:
                raise CursorExpiredError(
                    "cursor no longer matches the query, options, authorisation, settings or index"
                )
        if self.clock() >= float(claims.get("x", 0)):
            raise CursorExpiredError("cursor has expired")
        payload = self._load(binding.subject, str(claims.get("e")))
        if payload is None:
            raise CursorExpiredError("the evaluation behind this cursor is gone")
        return OpenedCursor(
            decode_payload(payload), str(claims["e"]), int(claims["o"]), float(claims["x"])
        )


# The most evaluations one save transaction stores (~17 KB each once encoded).
_SAVE_BATCH = 32
_QUEUE_FACT = "evaluationSaves"


def _save_batch(db: Database, batch: list[FrozenEvaluation]) -> None:
    """Store frozen evaluations in one transaction (payloads encoded on the drain's thread)."""
    rows = [
        store.SavedEvaluation(
            subject=f.subject,
            evalId=f.eval_id,
            payload=encode_payload(f.payload),
            expiresAt=f.expires_at,
            purgeEpoch=f.purge_epoch,
        )
        for f in batch
    ]
    store.save_evaluations(db, rows, now=max(f.now for f in batch))


def _save_queue(db: Database) -> GroupCommit[FrozenEvaluation]:
    """This Database's queue of evaluations to store (group commit: while one save
    commits, the next ones queue and are stored together)."""
    write = functools.partial(_save_batch, db)
    return queue_of(db, _QUEUE_FACT, write, max_batch=_SAVE_BATCH, label="save evaluations")


def _wait_saving(eval_id: str) -> None:
    future = _SAVING.get(eval_id)
    if future is not None:
        remaining = remaining_s()
        with contextlib.suppress(Exception):  # a failed save: the row is not there
            future.result(timeout=None if remaining is None else max(0.0, remaining))
