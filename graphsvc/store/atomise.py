"""What an atomisation reads and writes (SPEC §11 ATM-2, §12 SIG-1/SIG-2).

The parent's head (:func:`read_source`); inside the atomisation's transaction the
atoms (:func:`create_atom`), their signed derives_from edges
(:func:`create_lineage`), the parent's archive revision (:func:`archive_source`) and
the subject's signed-event chain (:func:`lock_event_chain`, :func:`last_event`,
:func:`append_event`). The steps a write batch shares (purge check, lock + heads,
operation record) are :mod:`graphsvc.store.write_steps`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from graphsvc.core.signing import SignedEvent
from graphsvc.core.write_models import AtomRef
from graphsvc.errors import InvalidInputError
from graphsvc.store.connection import Database, Tx, run
from graphsvc.store.lineage import LineageEdge
from graphsvc.store.write_steps import NewRevision, Provenance

__all__ = [
    "AtomiseSource",
    "StoredEvent",
    "append_event",
    "archive_source",
    "canonical_json",
    "create_atom",
    "create_lineage",
    "discard_input",
    "embed_head",
    "event_from_row",
    "head_to_embed",
    "last_event",
    "lock_event_chain",
    "read_source",
]


@dataclass(frozen=True)
class AtomiseSource:
    """The head of the atom to atomise, with its structural lineage facts."""

    atom_id: str
    rev: int
    state: str
    text: str
    sources: list[dict[str, Any]]
    atom_of: str | None
    depth: int
    atomised_into: int | None
    archived_at: str | None
    atom_ids: tuple[str, ...]

    @property
    def atomised(self) -> bool:
        return self.state == "archived" and (self.atomised_into or 0) > 0


@dataclass(frozen=True)
class StoredEvent:
    """The last event of a subject's chain and the hash stored with it."""

    event: SignedEvent
    hash: str | None


def read_source(db: Database, subject: str, atom_id: str) -> AtomiseSource | None:
    """The atom's head revision and nesting depth; None when it does not exist."""
    rows = db.read("atomise/read_source", subject=subject, atomId=atom_id)
    if not rows:
        return None
    row = rows[0]
    return AtomiseSource(
        atom_id=atom_id,
        rev=int(row["rev"]),
        state=row["state"],
        text=row["text"] or "",
        sources=json.loads(row["sources"]) if row["sources"] else [],
        atom_of=row["atomOf"],
        depth=int(row["depth"]),
        atomised_into=row["atomisedInto"],
        archived_at=row["archivedAt"],
        atom_ids=tuple(row["atomIds"] or ()),
    )


def discard_input(db: Database, subject: str, token_id: str) -> None:
    """Remove the Input record of an atomisation that did not commit (if unused)."""
    db.write("atomise/discard_input", subject=subject, tokenId=token_id)


def head_to_embed(db: Database, subject: str, ref: AtomRef) -> str | None:
    """The text of ``ref`` when it is still an active, unembedded current head that no
    atomisation archived; None otherwise (nothing to embed)."""
    rows = db.read("jobs/head_to_embed", subject=subject, atomId=ref.atom_id, rev=ref.rev)
    return rows[0]["text"] if rows else None


def embed_head(db: Database, subject: str, ref: AtomRef, embedding: list[float]) -> None:
    """Give a current head without an embedding its embedding (index data only)."""
    db.write(
        "atomise/embed_head",
        subject=subject,
        atomId=ref.atom_id,
        rev=ref.rev,
        embedding=embedding,
    )


def create_atom(
    tx: Tx,
    prov: Provenance,
    revision: NewRevision,
    *,
    token_id: str,
    atom_of: str,
    depth: int,
    index: int,
) -> bool:
    """One atom and its first revision, generated from the Input ``token_id``.

    Returns:
        False when the Input record is gone (nothing was created).
    """
    created = run(
        tx,
        "atomise/create_atom",
        atomId=revision["atomId"],
        tokenId=token_id,
        atomOf=atom_of,
        atomDepth=depth,
        index=index,
        text=revision["text"],
        digest=revision["digest"],
        tokens=revision["tokens"],
        changeId=revision["changeId"],
        embedding=revision["embedding"],
        **prov.params(),
    )
    return bool(created)


def create_lineage(tx: Tx, subject: str, edge: LineageEdge) -> bool:
    """The signed derives_from edge; False when either revision is missing."""
    rows = run(
        tx,
        "atomise/create_lineage",
        subject=subject,
        fromAtomId=edge.from_atom_id,
        fromRev=edge.from_rev,
        toAtomId=edge.to_atom_id,
        toRev=edge.to_rev,
        signature=edge.signature,
        keyId=edge.key_id,
        signedAt=edge.signed_at,
    )
    return bool(rows[0]["created"] == 1)


def archive_source(
    tx: Tx,
    prov: Provenance,
    source: AtomRef,
    *,
    atom_ids: list[str],
    archived_at: str,
    token_id: str,
) -> int:
    """Archive the parent head ``source`` by a new revision; returns its rev.

    The new revision copies the text, sources, links and provenance of the one it
    supersedes, records the atoms, and is decided from the Input ``token_id``.
    """
    archive_rev = source.rev + 1
    run(
        tx,
        "atomise/archive_source",
        atomId=source.atom_id,
        fromRev=source.rev,
        toRev=archive_rev,
        atomisedInto=len(atom_ids),
        archivedAt=archived_at,
        atomIds=atom_ids,
        tokenId=token_id,
        **prov.params(),
    )
    return archive_rev


def lock_event_chain(tx: Tx, subject: str, operation_id: str) -> None:
    """Serialise appends to the subject's signed-event chain until commit."""
    run(tx, "atomise/lock_chain", subject=subject, operationId=operation_id)


def last_event(tx: Tx, subject: str) -> StoredEvent | None:
    """The chain's last event (read after :func:`lock_event_chain`), if any.

    Raises:
        InvalidInputError: the stored record does not parse.
    """
    rows = run(tx, "atomise/last_event", subject=subject)
    if not rows:
        return None
    return StoredEvent(event=event_from_row(subject, rows[0]), hash=rows[0].get("hash"))


def append_event(tx: Tx, event: SignedEvent, event_hash: str) -> None:
    """Store ``event`` as the chain's next link, with its hash."""
    run(
        tx,
        "atomise/append_event",
        subject=event.subject,
        sequence=event.sequence,
        prevHash=event.prev_hash,
        type=event.type,
        payload=canonical_json(event.payload),
        signedAt=event.signed_at,
        keyId=event.key_id,
        signature=event.signature,
        hash=event_hash,
    )


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
