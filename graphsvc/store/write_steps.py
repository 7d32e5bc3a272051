"""The steps both write transactions share: a write batch and an atomisation.

:mod:`graphsvc.store.write_store` (the ``write`` mutation, WR-7) and
:mod:`graphsvc.atomise.transaction` (ATM-2) each run one Neo4j transaction made of
these steps, in this order:

1. :func:`refuse_if_purge_pending`: the purge stop marker (LNK-6) refuses the work.
2. :func:`claim_idempotency`: the key's record is claimed (a write batch with a key).
3. :func:`lock_heads`: the changed atoms are locked until commit and their committed
   heads read; the caller compares them with the heads it planned from (CAS).
4. Revisions in the one shape :class:`NewRevision` (:func:`new_revision`), stamped
   with the transaction's :class:`Provenance`; :func:`create_revisions` for a batch.
5. :func:`record_operation`: the ``(:Operation)`` record the revisions were written by.
6. :func:`finish_idempotency`: the key's stored result (a write batch with a key).
7. The steps that take a subject-wide lock held to commit, as late as they can run
   so the subject's other writers wait as little as possible: :func:`record_change`,
   the change feed's numbered record, then the entity index's mentions
   (:func:`graphsvc.store.entities.write_mentions`), which relies on every writer of
   the subject holding the sequence's lock there (and takes the entity lock after it).

:func:`write_transaction` runs the work and maps a unique-constraint failure (two
first writers of one new revision number) to ``CAS_CONFLICT`` for both paths.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, TypeVar

from neo4j.exceptions import ConstraintError

from graphsvc.core.binding import Binding
from graphsvc.core.citations import text_digest
from graphsvc.core.write_models import AtomRef
from graphsvc.errors import CasConflictError, PurgePendingError, StoreError
from graphsvc.store import changes, sequence_gate
from graphsvc.store.connection import Database, Tx, run

__all__ = [
    "CONCURRENT_CHANGE",
    "PURGE_PENDING",
    "IdempotencyClaim",
    "NewRevision",
    "Provenance",
    "Replay",
    "claim_idempotency",
    "create_revisions",
    "finish_idempotency",
    "lock_heads",
    "new_revision",
    "purge_pending",
    "record_change",
    "record_operation",
    "refuse_if_purge_pending",
    "write_transaction",
]

T = TypeVar("T")

PURGE_PENDING = "a purge in this subject has not finished; call purge again to resume it"
CONCURRENT_CHANGE = "another batch changed the same atom concurrently; re-read the head"


# --------------------------------------------------------------------------- transaction
def write_transaction(db: Database, work: Callable[[Tx], T], *, label: str) -> T:
    """Run ``work`` in one write transaction (retried on transient errors).

    Raises:
        CasConflictError: a unique constraint refused a node, i.e. another
            transaction created the same revision first; the lock and head check
            make this rare, the constraint is their backstop.
        StoreError: Neo4j failed; the transaction was rolled back.
    """
    try:
        with sequence_gate.scope():
            return db.write_tx(work, label=label)
    except StoreError as exc:
        if isinstance(exc.__cause__, ConstraintError):
            raise CasConflictError(CONCURRENT_CHANGE) from exc
        raise


# --------------------------------------------------------------------------- purge marker
def purge_pending(db: Database, subject: str) -> bool:
    """Whether a purge's stop marker stands in ``subject`` (its own read)."""
    return bool(db.read("write/purge_pending", subject=subject)[0]["pending"])


def refuse_if_purge_pending(tx: Tx, subject: str) -> None:
    """LNK-6 inside a transaction: nothing is written while a purge is unfinished.

    Raises:
        PurgePendingError: a purge in ``subject`` has not finished.
    """
    if run(tx, "write/purge_pending", subject=subject)[0]["pending"]:
        raise PurgePendingError(PURGE_PENDING)


# --------------------------------------------------------------------------- idempotency
@dataclass(frozen=True)
class Replay:
    """A result stored under an idempotency key (committed, pending or purged)."""

    operation_id: str
    fingerprint: str | None
    result: dict[str, dict[str, Any]] | None
    state: str
    auth_generation: int | None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Replay:
        result = json.loads(row["result"]) if row.get("result") else None
        return cls(
            operation_id=row["operationId"],
            fingerprint=row.get("fingerprint"),
            result=result,
            state=row["state"],
            auth_generation=row.get("authGeneration"),
        )


@dataclass(frozen=True)
class IdempotencyClaim:
    """The key record a transaction creates when it is the key's first user."""

    scope_key: str
    subject: str
    fingerprint: str
    operation_id: str
    auth_generation: int
    now: str


def claim_idempotency(tx: Tx, claim: IdempotencyClaim) -> Replay | None:
    """Claim the key for this operation; the other operation's record if it holds it.

    The MERGE on the unique key serialises concurrent first users: a second one
    waits for the first to commit and then reads its record.
    """
    row = run(
        tx,
        "write/claim_idempotency",
        scopeKey=claim.scope_key,
        subject=claim.subject,
        fingerprint=claim.fingerprint,
        operationId=claim.operation_id,
        authGeneration=claim.auth_generation,
        now=claim.now,
    )[0]
    if row["operationId"] == claim.operation_id:
        return None
    return Replay.from_row(row)


def finish_idempotency(tx: Tx, scope_key: str, result: Mapping[str, Any]) -> None:
    """Store the committed result under the key (replayed by IDEM-2)."""
    run(
        tx,
        "write/finish_idempotency",
        scopeKey=scope_key,
        result=json.dumps(result, sort_keys=True),
    )


# --------------------------------------------------------------------------- lock + heads
def lock_heads(tx: Tx, subject: str, atom_ids: Sequence[str], operation_id: str) -> dict[str, int]:
    """Lock the atoms until commit, then read their committed head revs.

    Concurrent writers of the same atom serialise on the lock, so the heads read
    after it are the committed ones (Neo4j is read-committed). An atom that does
    not exist in ``subject`` is absent from the answer.
    """
    ids = sorted(atom_ids)
    run(tx, "write/lock_atoms", subject=subject, atomIds=ids, operationId=operation_id)
    rows = run(tx, "write/read_heads", subject=subject, atomIds=ids)
    return {r["atomId"]: int(r["headRev"]) for r in rows if r["headRev"] is not None}


# --------------------------------------------------------------------------- revisions
@dataclass(frozen=True)
class Provenance:
    """Who writes, under which operation, when: stamped on every revision and record."""

    subject: str
    actor_kind: str
    actor_id: str
    policy: str
    operation_id: str
    now: str

    @classmethod
    def of(cls, binding: Binding, operation_id: str, now: str) -> Provenance:
        return cls(
            subject=binding.subject,
            actor_kind=binding.actor_kind,
            actor_id=binding.actor_id,
            policy=binding.policy,
            operation_id=operation_id,
            now=now,
        )

    def params(self) -> dict[str, Any]:
        """The query parameters of these facts."""
        return {
            "subject": self.subject,
            "actorKind": self.actor_kind,
            "actorId": self.actor_id,
            "policy": self.policy,
            "operationId": self.operation_id,
            "now": self.now,
        }


class NewRevision(TypedDict):
    """One revision to create (the query parameter shape of both write paths)."""

    atomId: str
    rev: int
    changeId: str
    state: str
    text: str
    digest: str | None
    tokens: int | None
    sources: str | None
    current: bool
    embedding: list[float] | None


def new_revision(
    ref: AtomRef,
    change_id: str,
    *,
    state: str,
    text: str,
    current: bool,
    tokens: int | None,
    sources: str | None,
    embedding: list[float] | None = None,
) -> NewRevision:
    """A revision of ``ref``; a current one carries the digest of its text."""
    return {
        "atomId": ref.atom_id,
        "rev": ref.rev,
        "changeId": change_id,
        "state": state,
        "text": text,
        "digest": text_digest(text) if current else None,
        "tokens": tokens,
        "sources": sources,
        "current": current,
        "embedding": embedding,
    }


def create_revisions(tx: Tx, prov: Provenance, revisions: Sequence[NewRevision]) -> None:
    """Create the revisions as the new heads of their (existing) atoms.

    Raises:
        StoreError: not every revision was created (its atom is missing).
    """
    created = run(tx, "write/create_revisions", revisions=list(revisions), **prov.params())[0][
        "created"
    ]
    if created != len(revisions):
        raise StoreError(f"created {created} of {len(revisions)} revisions")


# --------------------------------------------------------------------------- operation
def record_operation(
    tx: Tx,
    prov: Provenance,
    revisions: Sequence[AtomRef],
    token_ids: Sequence[str],
    *,
    kind: str | None = None,
) -> None:
    """The ``(:Operation)`` record: the revisions it wrote and the inputs it used.

    ``kind`` is ``"atomise"`` for an atomisation; a write batch's record has none.
    """
    run(
        tx,
        "write/create_operation",
        kind=kind,
        revisions=[r.to_json() for r in revisions],
        tokenIds=list(token_ids),
        **prov.params(),
    )


def record_change(
    tx: Tx, prov: Provenance, revisions: Sequence[AtomRef], *, kind: str | None = None
) -> None:
    """The operation's record in the change feed (:mod:`graphsvc.store.changes`),
    numbered in this transaction. Run it last but for the entity index's mentions:
    numbering takes the subject's sequence lock, held to commit, so every step after
    it lengthens the queue of the subject's other writers. This process's other
    writers of the subject queue in :mod:`~graphsvc.store.sequence_gate` meanwhile."""
    sequence_gate.enter(prov.subject)
    changes.record_change(tx, prov.params(), revisions, kind)
