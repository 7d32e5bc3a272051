"""Read manifests (MAN-1): recorded by ``read``, resolved and acknowledged by ``recordUse``."""

from __future__ import annotations

import functools
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

from graphsvc.core.write_models import AtomRef
from graphsvc.errors import DeadlineExceededError, GraphsvcError
from graphsvc.store.connection import Database, Tx, run
from graphsvc.store.group_commit import GroupCommit, queue_of
from graphsvc.telemetry.request_scope import remaining_s

__all__ = [
    "NewManifest",
    "acknowledge_manifest",
    "find_manifest_replay",
    "manifest_presented",
    "manifest_queue",
    "save_manifest",
    "save_manifests",
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


# The most manifests one transaction saves; below the 50 expired ones each batch
# removes per subject, so removal keeps pace with creation.
_MANIFEST_BATCH = 32
_QUEUE_FACT = "manifestSaves"


def save_manifests(db: Database, manifests: list[NewManifest]) -> None:
    """Record ``manifests`` in one transaction (all or none)."""
    db.write(
        "read/save_manifests",
        manifests=[
            {
                "subject": m.subject,
                "manifestId": m.manifest_id,
                "digest": m.digest,
                "now": m.now,
                "expiredBefore": m.expired_before,
                "policy": m.policy,
                "actorKind": m.actor_kind,
                "actorId": m.actor_id,
                "presented": [{"atomId": r.atom_id, "rev": r.rev} for r in m.presented],
            }
            for m in manifests
        ],
    )


def manifest_queue(db: Database) -> GroupCommit[NewManifest]:
    """This Database's queue of manifests to save (group commit of concurrent reads)."""
    write = functools.partial(save_manifests, db)
    return queue_of(db, _QUEUE_FACT, write, max_batch=_MANIFEST_BATCH, label="save manifests")


def save_manifest(db: Database, manifest: NewManifest) -> None:
    """Record ``manifest`` before its read answers, in a batch with concurrent reads'.

    It waits for its batch's commit, so a manifest a response names exists once the
    response is sent. A failed batch wrote nothing (one transaction); the manifest is
    then saved alone, in this thread, so one bad row or a lost connection does not fail
    the other reads of its batch.

    Raises:
        StoreError: the manifest could not be saved, alone either (the read answers
            the error and names no manifest).
        DeadlineExceededError: the request's time limit passed while it waited.
    """
    future = manifest_queue(db).put(manifest)
    remaining = remaining_s()
    try:
        future.result(timeout=None if remaining is None else max(0.0, remaining))
    except FutureTimeout as exc:
        # Its batch may still commit: a manifest no response names, removed once expired.
        raise DeadlineExceededError("request time limit reached saving the manifest") from exc
    except GraphsvcError:
        save_manifests(db, [manifest])


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
