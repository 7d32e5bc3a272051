"""Collect a forensic bundle from Neo4j (SIG-3); :mod:`.bundle` writes and verifies it.

From the chosen memory the export walks lineage in both directions (parent → atoms,
atom → parent, transitively), and gathers for every touched memory its envelope
``{atomId, atomisedInto, archivedAt, atomIds, atomOf}`` and all its revisions, the
signed derives_from edges between them, the subject's whole signed-event chain from
sequence 1, and every public key of the deployment's key ring (retired ones too), so
an offline verifier can re-check every signature.

``include_atomisation_chain=False`` keeps only the memory itself (its envelope still
names its atoms and parent) and drops the lineage walk and lineage records; the
subject's event chain is kept — it is the subject's signed history, not the chain
enrichment.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from graphsvc.atomise.lineage import walk_lineage
from graphsvc.atomise.transaction import event_from_row
from graphsvc.core.binding import Binding
from graphsvc.core.canonical import sha256_hex
from graphsvc.forensics.bundle import bundle_bytes, write_bundle
from graphsvc.keys.signing_keys import KeyRing
from graphsvc.store import export as store
from graphsvc.store.connection import Database
from graphsvc.store.export import BundleRevisionRow
from graphsvc.store.lineage import LineageHead

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["BundleParts", "ForensicExport", "collect_bundle", "export_forensic_bundle"]


@dataclass(frozen=True)
class BundleParts:
    """The arguments of :func:`graphsvc.forensics.bundle.bundle_bytes`."""

    manifest: dict[str, Any]
    revisions: list[dict[str, Any]]
    events: list[dict[str, Any]]
    public_keys: dict[str, str]
    lineage: list[dict[str, Any]]

    def to_bytes(self) -> bytes:
        return bundle_bytes(
            manifest=self.manifest,
            revisions=self.revisions,
            events=self.events,
            public_keys=self.public_keys,
            lineage=self.lineage,
        )

    def write(self, path: str | Path) -> None:
        """Write the bundle tar atomically (mode 0600)."""
        write_bundle(
            path,
            manifest=self.manifest,
            revisions=self.revisions,
            events=self.events,
            public_keys=self.public_keys,
            lineage=self.lineage,
        )


@dataclass(frozen=True)
class ForensicExport:
    """An exported bundle: its bytes and what it holds."""

    data: bytes
    memories: int
    revisions: int
    events: int
    lineage: int
    keys: int

    @property
    def sha256(self) -> str:
        return sha256_hex(self.data)

    @property
    def data_base64(self) -> str:
        """The bundle's bytes as base64 (how the surfaces carry them)."""
        return base64.b64encode(self.data).decode("ascii")

    def to_json(self) -> dict[str, Any]:
        """The GraphQL answer: base64 bundle, its SHA-256 and counts."""
        return {
            "bundle": self.data_base64,
            "sha256": self.sha256,
            "bytes": len(self.data),
            "memories": self.memories,
            "revisions": self.revisions,
            "events": self.events,
            "lineage": self.lineage,
            "keys": self.keys,
        }


def collect_bundle(
    db: Database,
    key_ring: Callable[[], KeyRing],
    clock: Callable[[], float],
    binding: Binding,
    atom_id: str,
    *,
    include_atomisation_chain: bool = True,
) -> BundleParts:
    """Read everything the bundle of ``atom_id`` holds.

    Args:
        db: the database.
        key_ring: loads the deployment's key ring (asked for after the reads).
        clock: epoch seconds (the manifest's ``exportedAt``).
        binding: the caller; only its subject is read.
        atom_id: the memory the bundle is about.
        include_atomisation_chain: walk its lineage both ways (else the memory alone).

    Raises:
        NotFoundError: no such atom in the caller's subject.
        SignerError: the key ring cannot be loaded.
        StoreError: Neo4j failed.
    """
    subject = binding.subject
    walk = walk_lineage(db, binding, atom_id, depth=None if include_atomisation_chain else 1)
    members = list(walk.depth_of) if include_atomisation_chain else [atom_id]
    memories = [_memory(aid, walk.heads.get(aid), walk.children_of(aid)) for aid in sorted(members)]
    revisions = [_revision_doc(row) for row in store.bundle_revisions(db, subject, members)]
    lineage = [e.signable(subject) for e in walk.edges] if include_atomisation_chain else []
    events = [
        event_from_row(subject, dict(row)).to_dict() for row in store.subject_events(db, subject)
    ]
    ring = key_ring()
    manifest = {
        "subject": subject,
        "root": atom_id,
        "includeAtomisationChain": include_atomisation_chain,
        "truncated": walk.truncated,
        "exportedAt": datetime.fromtimestamp(clock(), UTC).isoformat(),
        "generator": "graphsvc",
        "memories": memories,
    }
    return BundleParts(
        manifest=manifest,
        revisions=revisions,
        events=events,
        public_keys={kid: raw.hex() for kid, raw in sorted(ring.public_keys().items())},
        lineage=lineage,
    )


def _memory(atom_id: str, head: LineageHead | None, atom_ids: list[str]) -> dict[str, Any]:
    """One memory's envelope in the manifest. The heads are read after the walk (as
    lineage's graph does): a member purged or retired in between has none, and its
    memory says so (None) instead of failing."""
    return {
        "atomId": atom_id,
        "atomisedInto": head.get("atomisedInto") if head else None,
        "archivedAt": head.get("archivedAt") if head else None,
        "atomIds": atom_ids,
        "atomOf": head.get("atomOf") if head else None,
    }


def export_forensic_bundle(
    db: Database,
    key_ring: Callable[[], KeyRing],
    clock: Callable[[], float],
    binding: Binding,
    atom_id: str,
    *,
    include_atomisation_chain: bool = True,
) -> ForensicExport:
    """Export the bundle of ``atom_id`` as bytes (SIG-3); arguments as
    :func:`collect_bundle`.

    Raises:
        NotFoundError: no such atom in the caller's subject.
        SignerError: the key ring cannot be loaded.
        StoreError: Neo4j failed.
    """
    parts = collect_bundle(
        db,
        key_ring,
        clock,
        binding,
        atom_id,
        include_atomisation_chain=include_atomisation_chain,
    )
    return ForensicExport(
        data=parts.to_bytes(),
        memories=len(parts.manifest["memories"]),
        revisions=len(parts.revisions),
        events=len(parts.events),
        lineage=len(parts.lineage),
        keys=len(parts.public_keys),
    )


def _revision_doc(row: BundleRevisionRow) -> dict[str, Any]:
    doc: dict[str, Any] = dict(row)
    sources, atom_ids = row.get("sources"), row.get("atomIds")
    doc["sources"] = json.loads(sources) if sources else []
    doc["atomIds"] = list(atom_ids) if atom_ids is not None else None
    links = []
    for link in row.get("links") or []:
        item: dict[str, Any] = {
            "role": link["role"],
            "at": link["at"],
            "required": bool(link["required"]),
            "orderKey": link.get("orderKey"),
            "unavailable": bool(link["unavailable"]),
        }
        if not link["unavailable"] and link.get("atomId") is not None:
            item["target"] = {"atomId": link["atomId"], "rev": link.get("rev")}
        links.append(item)
    doc["links"] = links
    return doc
