"""The Input record ``observe`` creates (SPEC §3) and the manifests it names."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graphsvc.core.binding import Binding
from graphsvc.core.write_models import AtomRef
from graphsvc.store.connection import Database

__all__ = ["NewInput", "PresentationManifest", "create_input", "find_manifests"]


@dataclass(frozen=True)
class PresentationManifest:
    """A read manifest: whether it exists in the subject and what it presented."""

    manifest_id: str
    found: bool
    presented: tuple[AtomRef, ...]


@dataclass(frozen=True)
class NewInput:
    """Everything an Input record holds besides the binding that observed it.

    ``cites`` are the stored citation maps (``ordinal, uri, version, digest,
    sourceKey, start, end, unit, verified``).
    """

    token_id: str
    payload_digest: str
    inputs_digest: str
    presentations: list[str]
    sources_json: str
    watches_json: str
    now: float
    expires_at: float
    basis: list[AtomRef]
    watches: list[AtomRef]
    presented: list[AtomRef]
    inherit: list[str]
    cites: list[dict[str, Any]]


def find_manifests(
    db: Database, subject: str, manifest_ids: Sequence[str]
) -> list[PresentationManifest]:
    """Each manifest id looked up in ``subject``, in order."""
    rows = db.read("observe/find_manifests", subject=subject, manifestIds=list(manifest_ids))
    return [
        PresentationManifest(
            manifest_id=row["manifestId"],
            found=bool(row["found"]),
            presented=tuple(
                AtomRef(p["atomId"], p["rev"])
                for p in row["presented"]
                if p.get("atomId") is not None
            ),
        )
        for row in rows
    ]


def create_input(db: Database, binding: Binding, record: NewInput) -> None:
    """Create the Input record with its basis, watches, presentations, parents, citations."""
    db.write(
        "observe/create_input",
        subject=binding.subject,
        tokenId=record.token_id,
        payloadDigest=record.payload_digest,
        inputsDigest=record.inputs_digest,
        presentations=list(record.presentations),
        sources=record.sources_json,
        watchesJson=record.watches_json,
        actorKind=binding.actor_kind,
        actorId=binding.actor_id,
        policy=binding.policy,
        authGeneration=binding.auth_generation,
        now=record.now,
        expiresAt=record.expires_at,
        basis=[r.to_json() for r in record.basis],
        watches=[r.to_json() for r in record.watches],
        presented=[r.to_json() for r in record.presented],
        inherit=list(record.inherit),
        cites=record.cites,
    )
