"""Read manifests (MAN-1): recorded by ``read``, resolved and acknowledged by ``recordUse``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphsvc.core.write_models import AtomRef
from graphsvc.store.connection import Database, Tx, run

__all__ = [
    "NewManifest",
    "acknowledge_manifest",
    "find_manifest_replay",
    "manifest_presented",
    "save_manifest",
]


@dataclass(frozen=True)
class NewManifest:
    """What a read presented, as recorded (an observation record, CORE-2)."""

    subject: str
    manifest_id: str
    digest: str
    now: float
    expired_before: float  # manifests created before this are removed (a few per read)
    policy: str
    actor_kind: str
    actor_id: str
    presented: list[AtomRef]


def save_manifest(db: Database, manifest: NewManifest) -> None:
    """Record ``manifest`` as its own transaction."""
    db.write(
        "read/save_manifest",
        subject=manifest.subject,
        manifestId=manifest.manifest_id,
        digest=manifest.digest,
        now=manifest.now,
        expiredBefore=manifest.expired_before,
        policy=manifest.policy,
        actorKind=manifest.actor_kind,
        actorId=manifest.actor_id,
        presented=[{"atomId": r.atom_id, "rev": r.rev} for r in manifest.presented],
    )


def manifest_presented(tx: Tx, subject: str, manifest_id: str) -> list[AtomRef] | None:
    """The revisions a manifest presented; None when there is no such manifest."""
    row = run(tx, "usage/manifest_presented", subject=subject, manifestId=manifest_id)[0]
    if not row["found"]:
        return None
    return [
        AtomRef(p["atomId"], int(p["rev"])) for p in row["presented"] if p.get("atomId") is not None
    ]


def acknowledge_manifest(
    tx: Tx, *, subject: str, manifest_id: str, event_id: str, now: float
) -> None:
    """Mark the manifest as acknowledged by ``event_id`` in ``tx``."""
    run(
        tx,
        "usage/acknowledge_manifest",
        subject=subject,
        manifestId=manifest_id,
        eventId=event_id,
        now=now,
    )


def find_manifest_replay(db: Database, subject: str, manifest_id: str) -> dict[str, Any] | None:
    """The manifest with what it presented and each presented atom's head now
    (``replay/manifest``), or None when ``subject`` has no such manifest."""
    rows = db.read_rows("replay/manifest", subject=subject, manifestId=manifest_id)
    if not rows:
        return None
    row = rows[0]
    row["presented"] = [p for p in row["presented"] if p]
    return row
