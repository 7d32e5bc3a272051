"""Read replay (docs/time-travel.md): what a read presented, and what changed since.

``replay_manifest`` loads one manifest of the caller's subject (MAN-1) with every
revision it presented — text and tokens as presented (revisions never change), the
citations and the watches their provenance declared — and says per presented ref
what happened to its atom since:

- ``unchanged``: the presented revision is still the head;
- ``head_moved``: a newer revision is the head (``headRev``);
- ``retired`` / ``archived``: the head now is a retiring / archiving revision.

A manifest that presented a revision which was purged later was erased with it
(purge is erasure, docs/erasure.md): it answers None like an unknown id, and nothing
of the purged atom is ever shown. ``expired`` says the manifest is past
``manifest_lifetime_s`` (reads remove expired manifests lazily, so it may be gone).
``same_set_today`` is False when a read today cannot present the same set (a head
moved, or an atom left current reads); otherwise None: the manifest records no query,
so whether a read today would rank the same atoms cannot be told.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from graphsvc.core.binding import Binding
from graphsvc.core.views import ManifestReplay, PresentedRevision
from graphsvc.errors import InvalidInputError
from graphsvc.ops.guards import refuse_if_purge_pending
from graphsvc.store.connection import Database
from graphsvc.store.manifests import find_manifest_replay

__all__ = ["ManifestReplay", "PresentedRevision", "replay_manifest"]


def _change(p: dict[str, Any]) -> str:
    head, state = p.get("headRev"), p.get("headState")
    if head is not None and int(head) != int(p["rev"]) and state in ("retired", "archived"):
        return str(state)
    if head is not None and int(head) != int(p["rev"]):
        return "head_moved"
    return "unchanged"


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat()


def replay_manifest(
    db: Database, now: float, lifetime_s: float, binding: Binding, manifest_id: str
) -> ManifestReplay | None:
    """The manifest ``manifest_id`` of the caller's subject, replayed; None if none.

    Args:
        db: the store.
        now: epoch seconds (for ``expired``).
        lifetime_s: ``manifest_lifetime_s``.
        binding: the caller.
        manifest_id: the id a read answered.

    Raises:
        InvalidInputError: an id over 256 characters or empty.
        PurgePendingError: a purge of the subject has not finished (LNK-6).
    """
    if not 1 <= len(manifest_id) <= 256:
        raise InvalidInputError("manifest id must be 1..256 characters")
    refuse_if_purge_pending(db, binding.subject)
    row = find_manifest_replay(db, binding.subject, manifest_id)
    if row is None:
        return None
    created = float(row["createdAt"])
    presented = [
        PresentedRevision(
            atom_id=p["atomId"],
            rev=int(p["rev"]),
            state=p["state"],
            text=p.get("text") or "",
            tokens=p.get("tokens"),
            citations=[c for c in p.get("citations") or [] if c],
            watches=[
                {**w, "moved": w.get("headRev") is None or int(w["headRev"]) > int(w["rev"])}
                for w in p.get("watches") or []
            ],
            change=_change(p),
            head_rev=p.get("headRev"),
        )
        for p in row["presented"]
    ]
    return ManifestReplay(
        manifest_id=row["manifestId"],
        created_at=_iso(created),
        expires_at=_iso(created + lifetime_s),
        expired=now >= created + lifetime_s,
        policy=row.get("policy"),
        actor_kind=row.get("actorKind"),
        actor_id=row.get("actorId"),
        digest=row.get("digest"),
        acknowledged=row.get("acknowledgedEventId") is not None,
        presented=presented,
        same_set_today=False if any(p.change != "unchanged" for p in presented) else None,
    )
