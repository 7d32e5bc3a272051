"""``recordUse`` and ``resetUsage`` (SPEC §5 AvailabilityModel, AV-3, AV-4, MAN-1).

``recordUse`` is the only operation that changes usage state. It is keyed by
``eventId``: a host that resends reuses the eventId and the second call is a
no-op (``repeated: true``). State is per (subject, policy, atomId, rev, model).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from graphsvc.core.availability import AdaptiveUseModel, UsageEvent, checked_update
from graphsvc.core.binding import Binding
from graphsvc.core.write_models import AtomRef
from graphsvc.errors import DependencyInvalidError, InvalidInputError
from graphsvc.store import usage as store
from graphsvc.store.connection import Database, Tx
from graphsvc.store.manifests import acknowledge_manifest, manifest_presented

__all__ = ["UseRecorded", "record_use", "reset_usage"]


@dataclass(frozen=True)
class UseRecorded:
    """The answer to one accepted-use event: ``repeated`` when the event was seen
    before (nothing changed), else how many revisions' usage state it ``updated``."""

    event_id: str
    repeated: bool
    updated: int

    def to_json(self) -> dict[str, Any]:
        return {"eventId": self.event_id, "repeated": self.repeated, "updated": self.updated}


def record_use(
    db: Database,
    clock: Callable[[], float],
    binding: Binding,
    event_id: str,
    manifest: dict[str, Any],
    atoms: Sequence[AtomRef] | None = None,
) -> UseRecorded:
    """Apply one accepted-use event to the usage state of the used revisions.

    Args:
        db: the store.
        clock: epoch seconds.
        event_id: the host's id of the success event (deduplicated).
        manifest: the read's manifest (``id`` names it); its presented revisions
            are the used atoms when ``atoms`` is not given.
        atoms: the revisions used, when narrower than the presentation.

    Raises:
        InvalidInputError: bad eventId/manifest, or nothing to record.
        DependencyInvalidError: the manifest or a revision does not exist here.
        AvailabilityModelError: the model failed (AV-2); nothing is written.
    """
    if not event_id or len(event_id) > 256:
        raise InvalidInputError("eventId must be 1..256 characters")
    if not isinstance(manifest, dict):
        raise InvalidInputError("manifest must be a JSON object")
    manifest_id = manifest.get("id")
    if manifest_id is not None and not isinstance(manifest_id, str):
        raise InvalidInputError("manifest.id must be a string")
    model = AdaptiveUseModel()
    now = clock()
    s = binding.subject

    def work(tx: Tx) -> UseRecorded:
        refs = list(atoms or ())
        if manifest_id is not None:
            presented = manifest_presented(tx, s, manifest_id)
            if presented is None:
                raise DependencyInvalidError(f"manifest {manifest_id} does not exist")
            refs = refs or presented
        if not refs:
            raise InvalidInputError("recordUse needs atoms or a manifest that presented some")
        fresh = store.claim_event(tx, subject=s, event_id=event_id, policy=binding.policy, now=now)
        if not fresh:
            return UseRecorded(event_id, repeated=True, updated=0)
        stored = store.read_states(
            tx,
            subject=s,
            policy=binding.policy,
            model_id=model.id,
            refs=list(dict.fromkeys(refs)),
        )
        updates = _updates(model, stored, UsageEvent(event_id=event_id, at=now))
        store.write_states(
            tx, subject=s, policy=binding.policy, model_id=model.id, updates=updates, now=now
        )
        if manifest_id is not None:
            acknowledge_manifest(tx, subject=s, manifest_id=manifest_id, event_id=event_id, now=now)
        return UseRecorded(event_id, repeated=False, updated=len(updates))

    return db.write_tx(work, label="recordUse")


def _updates(
    model: AdaptiveUseModel, stored: list[store.StoredUsage], event: UsageEvent
) -> list[store.UsageUpdate]:
    """The new state of each used revision (the model's update of its stored state).

    Raises:
        DependencyInvalidError: a revision does not exist.
    """
    updates: list[store.UsageUpdate] = []
    for row in stored:
        if not row.found:
            raise DependencyInvalidError(f"{row.atom_id}@{row.rev} does not exist")
        state = json.loads(row.state) if row.state else {}
        new_state = checked_update(model, state, event)
        updates.append(
            store.UsageUpdate(
                atomId=row.atom_id,
                rev=row.rev,
                state=json.dumps(new_state, sort_keys=True, separators=(",", ":")),
            )
        )
    return updates


def reset_usage(db: Database, binding: Binding, atom_id: str | None = None) -> int:
    """Delete usage state of the caller's subject and policy (one atom or all); AV-3."""
    return store.reset_usage(db, subject=binding.subject, policy=binding.policy, atom_id=atom_id)
