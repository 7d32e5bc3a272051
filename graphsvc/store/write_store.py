"""The write transaction: one Neo4j transaction per batch, a fixed set of UNWIND queries.

``commit`` runs, in one transaction: purge-marker check, idempotency claim, atom
locks, CAS on heads, target checks, atoms, revisions, retire copies, links,
citations, provenance, the operation record and the idempotency result. Any
failure raises and the driver rolls the transaction back, so a batch is all or
nothing (WR-7), also when the connection or the server dies mid-way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from neo4j import ManagedTransaction
from neo4j.exceptions import ConstraintError

from graphsvc.errors import (
    CasConflictError,
    DependencyInvalidError,
    IdempotencyConflictError,
    PurgePendingError,
    StoreError,
    TokenInvalidError,
)
from graphsvc.store.connection import Database
from graphsvc.store.queries import query

__all__ = ["Replay", "WriteRequest", "commit_write", "find_idempotency"]


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
    revisions: list[dict[str, Any]]
    retires: list[dict[str, Any]]
    links_observed: list[dict[str, Any]]
    links_logical: list[dict[str, Any]]
    # refs that must exist: (atomId, rev, change id, wantText)
    refs: list[dict[str, Any]]
    cites: list[dict[str, Any]]
    gens: list[dict[str, Any]]
    token_ids: list[str]
    result: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Replay:
    """A committed result found under the same idempotency key."""

    operation_id: str
    fingerprint: str | None
    result: dict[str, dict[str, Any]] | None
    state: str
    auth_generation: int | None


def find_idempotency(db: Database, scope_key: str) -> Replay | None:
    """The record stored under ``scope_key``, if any (read outside a write)."""
    rows = db.read("write/find_idempotency", scopeKey=scope_key)
    if not rows or rows[0]["state"] is None:
        return None
    return _replay(rows[0])


def _replay(row: dict[str, Any]) -> Replay:
    result = json.loads(row["result"]) if row.get("result") else None
    return Replay(
        operation_id=row["operationId"],
        fingerprint=row.get("fingerprint"),
        result=result,
        state=row["state"],
        auth_generation=row.get("authGeneration"),
    )


def commit_write(db: Database, req: WriteRequest) -> Replay | None:
    """Commit the batch; return a Replay instead when the key was already used.

    Raises:
        PurgePendingError, IdempotencyConflictError, CasConflictError,
        DependencyInvalidError, TokenInvalidError: the batch is refused and nothing
            is written.
        StoreError: Neo4j failed; the transaction was rolled back.
    """
    try:
        return db.write_tx(lambda tx: _work(tx, req), label="write batch")
    except StoreError as exc:
        # Two first writers of one new revision number: the unique constraint on
        # (subject, atomId, rev) is the backstop behind the lock; report it as CAS.
        if isinstance(exc.__cause__, ConstraintError):
            raise CasConflictError(
                "another batch changed the same atom concurrently; re-read the head"
            ) from exc
        raise


def _run(tx: ManagedTransaction, name: str, **params: Any) -> list[dict[str, Any]]:
    return [r.data() for r in tx.run(query(name), params)]


def _work(tx: ManagedTransaction, req: WriteRequest) -> Replay | None:
    s = req.subject
    if _run(tx, "write/purge_pending", subject=s)[0]["pending"]:
        raise PurgePendingError(
            "a purge in this subject has not finished; call purge again to resume it"
        )
    if req.scope_key is not None:
        row = _run(
            tx,
            "write/claim_idempotency",
            scopeKey=req.scope_key,
            subject=s,
            fingerprint=req.fingerprint,
            operationId=req.operation_id,
            authGeneration=req.auth_generation,
            now=req.now,
        )[0]
        if row["operationId"] != req.operation_id:
            replay = _replay(row)
            if replay.state == "committed" and replay.fingerprint == req.fingerprint:
                return replay
            if replay.state == "purged":
                return replay
            raise IdempotencyConflictError(
                "this idempotencyKey was used for a different plan (IDEM-3)"
            )
    if req.cas:
        ids = sorted(req.cas)
        _run(tx, "write/lock_atoms", subject=s, atomIds=ids, operationId=req.operation_id)
        heads = {
            r["atomId"]: r["headRev"] for r in _run(tx, "write/read_heads", subject=s, atomIds=ids)
        }
        for atom_id in ids:
            change_id, expected = req.cas[atom_id]
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
    _check_refs(tx, req)
    if req.new_atom_ids:
        _run(tx, "write/create_atoms", subject=s, atomIds=req.new_atom_ids, now=req.now)
    created = _run(
        tx,
        "write/create_revisions",
        subject=s,
        revisions=req.revisions,
        now=req.now,
        actorKind=req.actor_kind,
        actorId=req.actor_id,
        policy=req.policy,
        operationId=req.operation_id,
    )[0]["created"]
    if created != len(req.revisions):
        raise StoreError(f"created {created} of {len(req.revisions)} revisions")
    if req.retires:
        _run(tx, "write/copy_retired", subject=s, retires=req.retires)
    for name, links in (
        ("write/create_links_observed", req.links_observed),
        ("write/create_links_logical", req.links_logical),
    ):
        if links:
            n = _run(tx, name, subject=s, links=links)[0]["created"]
            if n != len(links):
                raise DependencyInvalidError("a link target does not exist")
    if req.cites:
        _run(tx, "write/create_citations", subject=s, cites=req.cites)
    if req.gens:
        recorded = _run(tx, "write/record_generation", subject=s, gens=req.gens)[0]["recorded"]
        if recorded != len(req.gens):
            # An Input was erased (purge) after the token check: without it the
            # revision would carry no provenance, so the batch must not commit.
            raise TokenInvalidError("an InputToken's inputs were purged during the write")
    _run(
        tx,
        "write/create_operation",
        subject=s,
        operationId=req.operation_id,
        actorKind=req.actor_kind,
        actorId=req.actor_id,
        policy=req.policy,
        now=req.now,
        revisions=[{"atomId": r["atomId"], "rev": r["rev"]} for r in req.revisions],
        tokenIds=req.token_ids,
    )
    if req.scope_key is not None:
        _run(
            tx,
            "write/finish_idempotency",
            scopeKey=req.scope_key,
            result=json.dumps(req.result, sort_keys=True),
        )
    return None


def _check_refs(tx: ManagedTransaction, req: WriteRequest) -> None:
    """Every referenced revision must exist in this subject (else DEPENDENCY_INVALID).

    Another subject's atom is indistinguishable from a missing one: the query
    filters by subject, so it simply is not found.
    """
    if not req.refs:
        return
    rows = _run(
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
