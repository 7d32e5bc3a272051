"""The write transaction: one Neo4j transaction per batch, a fixed set of UNWIND queries.

``commit_write`` runs, in one transaction: purge-marker check, idempotency claim, atom
locks, CAS on heads, target checks, atoms, revisions, retire copies, links,
citations, provenance, the operation record, the background jobs the batch causes
(the outbox, :mod:`graphsvc.store.jobs`), the idempotency result, and last the two
steps that hold a subject-wide lock until commit: the change feed's record, then
entity mentions (SPEC §16; a write that names no entity marks its heads before the
record). Any
failure raises and the driver rolls the transaction back, so a batch is all or
nothing (WR-7), also when the connection or the server dies mid-way. The steps an
atomisation shares (purge check, idempotency, lock + heads, revisions, operation
record, CAS_CONFLICT on a constraint race) are :mod:`graphsvc.store.write_steps`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from graphsvc.core.write_models import AtomRef
from graphsvc.errors import (
    CasConflictError,
    DependencyInvalidError,
    IdempotencyConflictError,
    TokenInvalidError,
)
from graphsvc.store import entities
from graphsvc.store.connection import Database, Tx, run
from graphsvc.store.entities import HeadMentions
from graphsvc.store.jobs import NewJob, create_jobs
from graphsvc.store.write_steps import (
    IdempotencyClaim,
    NewRevision,
    Provenance,
    Replay,
    claim_idempotency,
    create_revisions,
    finish_idempotency,
    lock_heads,
    record_change,
    record_operation,
    refuse_if_purge_pending,
    write_transaction,
)

__all__ = [
    "FoundRevision",
    "NewCitation",
    "NewGeneration",
    "NewLink",
    "Replay",
    "RequiredRef",
    "RetireCopy",
    "StoreRef",
    "WriteRequest",
    "commit_write",
    "find_idempotency",
    "find_revisions",
    "head_revs",
]


class RetireCopy(TypedDict):
    """A retire revision ``toRev`` that copies links and sources of ``fromRev``."""

    atomId: str
    fromRev: int
    toRev: int


class NewLink(TypedDict):
    """A link from a new revision to a target revision (observed or logical)."""

    srcAtomId: str
    srcRev: int
    atomId: str
    rev: int
    role: str
    required: bool
    orderKey: str | None
    ordinal: int


class RequiredRef(TypedDict):
    """A revision the batch refers to, which must exist in the subject."""

    atomId: str
    rev: int
    changeId: str
    wantText: bool


class StoreRef(TypedDict):
    """The stored revision an ``atom:`` citation names."""

    atomId: str
    rev: int


class NewCitation(TypedDict):
    """One source citation of a new revision (``storeRef`` for an ``atom:`` source)."""

    srcAtomId: str
    srcRev: int
    changeId: str
    ordinal: int
    uri: str
    version: str | None
    digest: str | None
    sourceKey: str
    start: int | None
    end: int | None
    unit: str | None
    verified: bool
    storeRef: StoreRef | None


class NewGeneration(TypedDict):
    """Provenance of a new revision: generated (or, for a retire, decided) from a token."""

    atomId: str
    rev: int
    tokenId: str
    kind: str


@dataclass
class WriteRequest:
    """Everything the transaction needs, already validated and resolved in Python."""

    subject: str
    policy: str
    actor_kind: str
    actor_id: str
    auth_generation: int
    operation_id: str
    now: str
    fingerprint: str
    scope_key: str | None
    new_atom_ids: list[str]
    # atomId -> (change id, expected head rev) for revise/retire
    cas: dict[str, tuple[str, int]]
    revisions: list[NewRevision]
    retires: list[RetireCopy]
    links_observed: list[NewLink]
    links_logical: list[NewLink]
    refs: list[RequiredRef]
    cites: list[NewCitation]
    gens: list[NewGeneration]
    token_ids: list[str]
    result: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Background work this batch causes (the outbox): created in its transaction.
    jobs: list[NewJob] = field(default_factory=list)
    # The entity index (SPEC §16): the extractor's version (None: no index) and the
    # mentions of the new current heads; revised and retired atoms lose their old ones.
    extractor: str | None = None
    mentions: list[HeadMentions] = field(default_factory=list)

    def provenance(self) -> Provenance:
        return Provenance(
            subject=self.subject,
            actor_kind=self.actor_kind,
            actor_id=self.actor_id,
            policy=self.policy,
            operation_id=self.operation_id,
            now=self.now,
        )


@dataclass(frozen=True)
class FoundRevision:
    """Whether a stored revision exists; its text only when it was asked for."""

    atom_id: str
    rev: int
    found: bool
    text: str | None
    digest: str | None


def find_idempotency(db: Database, scope_key: str) -> Replay | None:
    """The record stored under ``scope_key``, if any (read outside a write)."""
    rows = db.read("write/find_idempotency", scopeKey=scope_key)
    if not rows or rows[0]["state"] is None:
        return None
    return Replay.from_row(rows[0])


def find_revisions(
    db: Database, subject: str, refs: Sequence[AtomRef], *, with_text: bool
) -> list[FoundRevision]:
    """Each ref looked up in ``subject`` (in order); another subject's is not found."""
    rows = db.read(
        "write/check_refs",
        subject=subject,
        refs=[{"atomId": r.atom_id, "rev": r.rev, "wantText": with_text} for r in refs],
    )
    return [
        FoundRevision(
            atom_id=r["atomId"],
            rev=r["rev"],
            found=bool(r["found"]),
            text=r["text"],
            digest=r["digest"],
        )
        for r in rows
    ]


def head_revs(db: Database, subject: str, atom_ids: Sequence[str]) -> dict[str, int]:
    """The head rev of each atom of ``subject`` that exists."""
    rows = db.read("write/head_refs", subject=subject, atomIds=list(atom_ids))
    return {r["atomId"]: r["headRev"] for r in rows if r["headRev"] is not None}


def commit_write(db: Database, req: WriteRequest) -> Replay | None:
    """Commit the batch; return a Replay instead when the key was already used.

    Raises:
        PurgePendingError, IdempotencyConflictError, CasConflictError,
        DependencyInvalidError, TokenInvalidError: the batch is refused and nothing
            is written.
        StoreError: Neo4j failed; the transaction was rolled back.
    """
    return write_transaction(db, lambda tx: _work(tx, req), label="write batch")


def _work(tx: Tx, req: WriteRequest) -> Replay | None:
    s = req.subject
    refuse_if_purge_pending(tx, s)
    if req.scope_key is not None:
        held = claim_idempotency(
            tx,
            IdempotencyClaim(
                scope_key=req.scope_key,
                subject=s,
                fingerprint=req.fingerprint,
                operation_id=req.operation_id,
                auth_generation=req.auth_generation,
                now=req.now,
            ),
        )
        if held is not None:
            if held.state == "committed" and held.fingerprint == req.fingerprint:
                return held
            if held.state == "purged":
                return held
            raise IdempotencyConflictError(
                "this idempotencyKey was used for a different plan (IDEM-3)"
            )
    if req.cas:
        _check_cas(req.cas, lock_heads(tx, s, list(req.cas), req.operation_id))
    _check_refs(tx, req)
    prov = req.provenance()
    if req.new_atom_ids:
        run(tx, "write/create_atoms", subject=s, atomIds=req.new_atom_ids, now=req.now)
    create_revisions(tx, prov, req.revisions)
    if req.retires:
        run(tx, "write/copy_retired", subject=s, retires=req.retires)
    _create_links(tx, req)
    if req.cites:
        run(tx, "write/create_citations", subject=s, cites=req.cites)
    if req.gens:
        recorded = run(tx, "write/record_generation", subject=s, gens=req.gens)[0]["recorded"]
        if recorded != len(req.gens):
            # An Input was erased (purge) after the token check: without it the
            # revision would carry no provenance, so the batch must not commit.
            raise TokenInvalidError("an InputToken's inputs were purged during the write")
    written = [AtomRef(r["atomId"], r["rev"]) for r in req.revisions]
    record_operation(tx, prov, written, req.token_ids)
    create_jobs(tx, prov, req.auth_generation, req.jobs)
    if req.scope_key is not None:
        finish_idempotency(tx, req.scope_key, req.result)
    if req.extractor is not None and entities.plain(sorted(req.cas), req.mentions):
        entities.mark_heads(tx, s, req.mentions, req.extractor)
    # Last, the two steps that hold a subject-wide lock until commit (write_steps).
    record_change(tx, prov, written)
    if req.extractor is not None:
        entities.write_mentions(
            tx, s, sorted(req.cas), req.mentions, req.extractor, req.operation_id
        )
    return None


def _check_cas(cas: dict[str, tuple[str, int]], heads: dict[str, int]) -> None:
    """Every revised or retired target must still be the head the plan read.

    Raises:
        DependencyInvalidError: the target revision does not exist.
        CasConflictError: the target is no longer the head.
    """
    for atom_id in sorted(cas):
        change_id, expected = cas[atom_id]
        head = heads.get(atom_id)
        if head is None or expected > head:
            raise DependencyInvalidError(
                f"change {change_id!r}: target {atom_id}@{expected} does not exist",
                details={"changeId": change_id},
            )
        if head != expected:
            raise CasConflictError(
                f"change {change_id!r}: target {atom_id}@{expected} is no longer the "
                f"head (head is rev {head}); re-read and retry",
                details={"changeId": change_id, "head": {"atomId": atom_id, "rev": head}},
            )


def _create_links(tx: Tx, req: WriteRequest) -> None:
    for name, links in (
        ("write/create_links_observed", req.links_observed),
        ("write/create_links_logical", req.links_logical),
    ):
        if links:
            n = run(tx, name, subject=req.subject, links=links)[0]["created"]
            if n != len(links):
                raise DependencyInvalidError("a link target does not exist")


def _check_refs(tx: Tx, req: WriteRequest) -> None:
    """Every referenced revision must exist in this subject (else DEPENDENCY_INVALID).

    Another subject's atom is indistinguishable from a missing one: the query
    filters by subject, so it simply is not found.
    """
    if not req.refs:
        return
    rows = run(
        tx,
        "write/check_refs",
        subject=req.subject,
        refs=[
            {"atomId": r["atomId"], "rev": r["rev"], "wantText": r["wantText"]} for r in req.refs
        ],
    )
    for ref, row in zip(req.refs, rows, strict=True):
        if not row["found"]:
            raise DependencyInvalidError(
                f"change {ref['changeId']!r}: {ref['atomId']}@{ref['rev']} does not exist",
                details={"changeId": ref["changeId"]},
            )
