"""The atomisation transaction (ATM-2): everything commits together or not at all.

In ONE Neo4j transaction: the purge-marker check, the lock and CAS on the parent
head (the steps a write batch shares, :mod:`graphsvc.store.write_steps`), per atom
the Atom and its first revision (then the ``post_store`` and ``pre_link`` hooks),
its signed DERIVES_FROM edge (then ``post_link``), the parent's archive revision,
the operation record, and the ``atomisation_complete`` event appended to the
subject's hash chain (SIG-2) under the subject's chain lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from graphsvc.atomise.hooks import AtomiseHooks, run_hooks
from graphsvc.core.binding import Binding
from graphsvc.core.entity_keys import Mention
from graphsvc.core.signing import event_hash, make_event
from graphsvc.core.write_models import AtomRef
from graphsvc.errors import CasConflictError, NotFoundError, SignerError, StoreError
from graphsvc.store import atomise as store
from graphsvc.store import entities
from graphsvc.store.atomise import canonical_json, event_from_row
from graphsvc.store.connection import Database, Tx
from graphsvc.store.entities import head_mentions
from graphsvc.store.jobs import JobHold, finish_in
from graphsvc.store.lineage import LineageEdge
from graphsvc.store.write_steps import (
    Provenance,
    lock_heads,
    new_revision,
    record_change,
    record_operation,
    refuse_if_purge_pending,
    write_transaction,
)

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
    # The background job this atomisation is the effect of: its end is recorded
    # in the same transaction, so effect and record commit together.
    job: JobHold | None = None
    # The entity index (SPEC §16): the extractor's version (None: no index) and each
    # atom's mentions; the archived parent loses its own (ENT-2).
    extractor: str | None = None
    mentions: list[list[Mention]] = field(default_factory=list)

    @property
    def source(self) -> AtomRef:
        return AtomRef(self.source_id, self.source_rev)

    def provenance(self) -> Provenance:
        return Provenance.of(self.binding, self.operation_id, self.now_iso)


def commit_atomisation(db: Database, plan: AtomisePlan) -> int:
    """Run the transaction; return the sequence of the appended event.

    Raises:
        PurgePendingError, NotFoundError, CasConflictError: refused; nothing written.
        GovernanceRefusedError: a hook refused an atom; nothing written.
        SignerError: the stored event chain does not re-hash; nothing written.
        StoreError: Neo4j failed; the transaction was rolled back.
    """
    return write_transaction(db, lambda tx: _commit(tx, plan), label="atomise")


def _commit(tx: Tx, plan: AtomisePlan) -> int:
    prov = plan.provenance()
    refuse_if_purge_pending(tx, plan.subject)
    _check_source_head(tx, plan)
    for index in range(len(plan.atom_ids)):
        _store_atom(tx, plan, prov, index)
    archive_rev = store.archive_source(
        tx,
        prov,
        plan.source,
        atom_ids=plan.atom_ids,
        archived_at=plan.signed_at,
        token_id=plan.token_id,
    )
    written = [AtomRef(a, 1) for a in plan.atom_ids] + [AtomRef(plan.source_id, archive_rev)]
    record_operation(tx, prov, written, [plan.token_id], kind="atomise")
    sequence = _append_event(tx, plan)
    if plan.job is not None:
        finish_in(
            tx, plan.job.job_id, plan.job.owner, state="done", now_iso=plan.now_iso,
            outcome="atomised",
        )  # fmt: skip
    # Last, the two steps that hold a subject-wide lock until commit (write_steps).
    record_change(tx, prov, written, kind="atomise")
    if plan.extractor is not None:
        heads = [head_mentions(a, 1, m) for a, m in zip(plan.atom_ids, plan.mentions, strict=True)]
        entities.write_mentions(
            tx, plan.subject, [plan.source_id], heads, plan.extractor, plan.operation_id
        )
    return sequence


def _check_source_head(tx: Tx, plan: AtomisePlan) -> None:
    """Lock the parent; its committed head must be the revision being atomised (CAS).

    Raises:
        NotFoundError: the parent no longer exists.
        CasConflictError: the parent's head moved since it was read.
    """
    heads = lock_heads(tx, plan.subject, [plan.source_id], plan.operation_id)
    head = heads.get(plan.source_id)
    if head is None:
        raise NotFoundError(f"atom {plan.source_id} does not exist")
    if head != plan.source_rev:
        raise CasConflictError(
            f"atom {plan.source_id} changed while it was being atomised "
            f"(head is rev {head}, atomised rev {plan.source_rev}); retry",
            details={"head": {"atomId": plan.source_id, "rev": head}},
        )


def _store_atom(tx: Tx, plan: AtomisePlan, prov: Provenance, index: int) -> None:
    """One atom, its signed edge to the parent, and the hooks around them."""
    atom_id, text = plan.atom_ids[index], plan.texts[index]
    revision = new_revision(
        AtomRef(atom_id, 1),
        f"atom-{index}",
        state="active",
        text=text,
        current=True,
        tokens=plan.tokens[index],
        sources="[]",
        embedding=plan.vectors[index],
    )
    created = store.create_atom(
        tx,
        prov,
        revision,
        token_id=plan.token_id,
        atom_of=plan.source_id,
        depth=plan.source_depth + 1,
        index=index,
    )
    if not created:
        raise StoreError("the atomisation's input record disappeared before commit")
    run_hooks(plan.hooks, "post_store", index, text)
    run_hooks(plan.hooks, "pre_link", index, text)
    edge = LineageEdge(
        from_atom_id=atom_id,
        from_rev=1,
        to_atom_id=plan.source_id,
        to_rev=plan.source_rev,
        signature=plan.signatures[index],
        key_id=plan.key_id,
        signed_at=plan.signed_at,
    )
    if not store.create_lineage(tx, plan.subject, edge):
        raise StoreError("the derives_from edge could not be created")
    run_hooks(plan.hooks, "post_link", index, text)


def _append_event(tx: Tx, plan: AtomisePlan) -> int:
    s = plan.subject
    store.lock_event_chain(tx, s, plan.operation_id)
    last = store.last_event(tx, s)
    prev = last.event if last is not None else None
    if last is not None and last.hash not in (None, event_hash(last.event)):
        raise SignerError(
            f"the stored signed-event chain of this subject does not re-hash at sequence "
            f"{last.event.sequence}; refusing to extend it"
        )
    event = make_event(plan.seed, prev, s, EVENT_ATOMISATION_COMPLETE, plan.payload, plan.signed_at)
    store.append_event(tx, event, event_hash(event))
    return event.sequence
