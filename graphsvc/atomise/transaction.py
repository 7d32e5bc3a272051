"""The atomisation transaction (ATM-2): everything commits together or not at all.

In ONE Neo4j transaction: the purge-marker check, the lock and CAS on the parent
head, per atom the Atom and its first revision (then the ``post_store`` and
``pre_link`` hooks), its signed DERIVES_FROM edge (then ``post_link``), the parent's
archive revision, the operation record, and the ``atomisation_complete`` event
appended to the subject's hash chain (SIG-2) under the subject's chain lock.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from neo4j import ManagedTransaction

from graphsvc.atomise.hooks import AtomiseHooks, run_hooks
from graphsvc.core.binding import Binding
from graphsvc.core.citations import text_digest
from graphsvc.core.signing import SignedEvent, event_hash, make_event
from graphsvc.errors import (
    CasConflictError,
    InvalidInputError,
    NotFoundError,
    PurgePendingError,
    SignerError,
    StoreError,
)
from graphsvc.store.connection import Database
from graphsvc.store.queries import query

__all__ = [
    "EVENT_ATOMISATION_COMPLETE",
    "AtomisePlan",
    "canonical_json",
    "commit_atomisation",
    "event_from_row",
]

EVENT_ATOMISATION_COMPLETE: Final = "atomisation_complete"


@dataclass
class AtomisePlan:
    """Everything the transaction writes, prepared (embedded, signed) beforehand."""

    subject: str
    binding: Binding
    source_id: str
    source_rev: int
    source_depth: int
    atom_ids: list[str]
    texts: list[str]
    vectors: list[list[float]]
    tokens: list[int]
    signatures: list[str]
    key_id: str
    seed: bytes
    token_id: str
    operation_id: str
    now_iso: str
    signed_at: str
    payload: dict[str, Any]
    hooks: list[AtomiseHooks] = field(default_factory=list)


def commit_atomisation(db: Database, plan: AtomisePlan) -> int:
    """Run the transaction; return the sequence of the appended event.

    Raises:
        PurgePendingError, NotFoundError, CasConflictError: refused; nothing written.
        GovernanceRefusedError: a hook refused an atom; nothing written.
        SignerError: the stored event chain does not re-hash; nothing written.
        StoreError: Neo4j failed; the transaction was rolled back.
    """
    return db.write_tx(lambda tx: _commit(tx, plan), label="atomise")


def _run(tx: ManagedTransaction, name: str, **params: Any) -> list[dict[str, Any]]:
    return [r.data() for r in tx.run(query(name), params)]


def _commit(tx: ManagedTransaction, plan: AtomisePlan) -> int:
    s = plan.subject
    b = plan.binding
    if _run(tx, "write/purge_pending", subject=s)[0]["pending"]:
        raise PurgePendingError("a purge in this subject has not finished")
    heads = _run(
        tx, "atomise/lock_source", subject=s, atomId=plan.source_id, operationId=plan.operation_id
    )
    if not heads:
        raise NotFoundError(f"atom {plan.source_id} does not exist")
    if heads[0]["headRev"] != plan.source_rev:
        raise CasConflictError(
            f"atom {plan.source_id} changed while it was being atomised "
            f"(head is rev {heads[0]['headRev']}, atomised rev {plan.source_rev}); retry",
            details={"head": {"atomId": plan.source_id, "rev": heads[0]["headRev"]}},
        )
    actor = {"actorKind": b.actor_kind, "actorId": b.actor_id, "policy": b.policy}
    for index, (atom_id, text) in enumerate(zip(plan.atom_ids, plan.texts, strict=True)):
        created = _run(
            tx,
            "atomise/create_atom",
            subject=s,
            atomId=atom_id,
            tokenId=plan.token_id,
            now=plan.now_iso,
            atomOf=plan.source_id,
            atomDepth=plan.source_depth + 1,
            index=index,
            text=text,
            digest=text_digest(text),
            tokens=plan.tokens[index],
            operationId=plan.operation_id,
            changeId=f"atom-{index}",
            embedding=plan.vectors[index],
            **actor,
        )
        if not created:
            raise StoreError("the atomisation's input record disappeared before commit")
        run_hooks(plan.hooks, "post_store", index, text)
        run_hooks(plan.hooks, "pre_link", index, text)
        linked = _run(
            tx,
            "atomise/create_lineage",
            subject=s,
            fromAtomId=atom_id,
            fromRev=1,
            toAtomId=plan.source_id,
            toRev=plan.source_rev,
            signature=plan.signatures[index],
            keyId=plan.key_id,
            signedAt=plan.signed_at,
        )
        if linked[0]["created"] != 1:
            raise StoreError("the derives_from edge could not be created")
        run_hooks(plan.hooks, "post_link", index, text)
    archive_rev = plan.source_rev + 1
    _run(
        tx,
        "atomise/archive_source",
        subject=s,
        atomId=plan.source_id,
        fromRev=plan.source_rev,
        toRev=archive_rev,
        now=plan.now_iso,
        operationId=plan.operation_id,
        atomisedInto=len(plan.atom_ids),
        archivedAt=plan.signed_at,
        atomIds=plan.atom_ids,
        tokenId=plan.token_id,
        **actor,
    )
    _run(
        tx,
        "atomise/create_operation",
        subject=s,
        operationId=plan.operation_id,
        now=plan.now_iso,
        tokenId=plan.token_id,
        revisions=[{"atomId": a, "rev": 1} for a in plan.atom_ids]
        + [{"atomId": plan.source_id, "rev": archive_rev}],
        **actor,
    )
    return _append_event(tx, plan)


def _append_event(tx: ManagedTransaction, plan: AtomisePlan) -> int:
    s = plan.subject
    _run(tx, "atomise/lock_chain", subject=s, operationId=plan.operation_id)
    rows = _run(tx, "atomise/last_event", subject=s)
    prev = event_from_row(s, rows[0]) if rows else None
    if prev is not None and rows[0].get("hash") not in (None, event_hash(prev)):
        raise SignerError(
            f"the stored signed-event chain of this subject does not re-hash at sequence "
            f"{prev.sequence}; refusing to extend it"
        )
    event = make_event(plan.seed, prev, s, EVENT_ATOMISATION_COMPLETE, plan.payload, plan.signed_at)
    _run(
        tx,
        "atomise/append_event",
        subject=s,
        sequence=event.sequence,
        prevHash=event.prev_hash,
        type=event.type,
        payload=canonical_json(event.payload),
        signedAt=event.signed_at,
        keyId=event.key_id,
        signature=event.signature,
        hash=event_hash(event),
    )
    return event.sequence


def canonical_json(payload: Any) -> str:
    """The stored JSON text of an event payload (sorted keys, compact, UTF-8)."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def event_from_row(subject: str, row: dict[str, Any]) -> SignedEvent:
    """Rebuild a stored ``(:SignedEvent)`` as a :class:`SignedEvent`.

    Raises:
        InvalidInputError: the stored record does not parse.
    """
    try:
        payload = json.loads(row["payload"])
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"stored event {row.get('sequence')} has no JSON payload") from exc
    return SignedEvent.from_dict(
        {
            "v": 1,
            "subject": subject,
            "sequence": row["sequence"],
            "prevHash": row["prevHash"],
            "type": row["type"],
            "payload": payload,
            "signedAt": row["signedAt"],
            "keyId": row["keyId"],
            "signature": row["signature"],
        }
    )
