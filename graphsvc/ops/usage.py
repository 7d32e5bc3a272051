"""``recordUse`` and ``resetUsage`` (SPEC §5 AvailabilityModel, AV-3, AV-4, MAN-1).

``recordUse`` is the only operation that changes usage state. It is keyed by
``eventId``: a host that resends reuses the eventId and the second call is a
no-op (``repeated: true``). State is per (subject, policy, atomId, rev, model).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from neo4j import ManagedTransaction

from graphsvc.core.availability import AdaptiveUseModel, UsageEvent, checked_update
from graphsvc.core.binding import Binding
from graphsvc.core.write_models import AtomRef
from graphsvc.errors import DependencyInvalidError, InvalidInputError
from graphsvc.store.queries import query

if TYPE_CHECKING:
    from graphsvc.service import Service

__all__ = ["record_use", "reset_usage"]


def _run(tx: ManagedTransaction, name: str, **params: Any) -> list[dict[str, Any]]:
    return [r.data() for r in tx.run(query(name), params)]


def record_use(
    service: Service,
    binding: Binding,
    event_id: str,
    manifest: dict[str, Any],
    atoms: Sequence[AtomRef] | None = None,
) -> dict[str, Any]:
    """Apply one accepted-use event to the usage state of the used revisions.

    Args:
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
    now = service.clock()
    s = binding.subject

    def work(tx: ManagedTransaction) -> dict[str, Any]:
        refs = list(atoms or ())
        if manifest_id is not None:
            row = _run(tx, "usage/manifest_presented", subject=s, manifestId=manifest_id)[0]
            if not row["found"]:
                raise DependencyInvalidError(f"manifest {manifest_id} does not exist")
            if not refs:
                refs = [
                    AtomRef(p["atomId"], int(p["rev"]))
                    for p in row["presented"]
                    if p.get("atomId") is not None
                ]
        if not refs:
            raise InvalidInputError("recordUse needs atoms or a manifest that presented some")
        fresh = _run(
            tx,
            "usage/claim_event",
            subject=s,
            eventId=event_id,
            now=now,
            policy=binding.policy,
        )[0]["fresh"]
        if not fresh:
            return {"eventId": event_id, "repeated": True, "updated": 0}
        rows = _run(
            tx,
            "usage/read_states",
            subject=s,
            policy=binding.policy,
            modelId=model.id,
            refs=[r.to_json() for r in dict.fromkeys(refs)],
        )
        updates = []
        event = UsageEvent(event_id=event_id, at=now)
        for row in rows:
            if not row["found"]:
                raise DependencyInvalidError(f"{row['atomId']}@{row['rev']} does not exist")
            state = json.loads(row["state"]) if row["state"] else {}
            new_state = checked_update(model, state, event)
            updates.append(
                {
                    "atomId": row["atomId"],
                    "rev": row["rev"],
                    "state": json.dumps(new_state, sort_keys=True, separators=(",", ":")),
                }
            )
        _run(
            tx,
            "usage/write_states",
            subject=s,
            policy=binding.policy,
            modelId=model.id,
            updates=updates,
            now=now,
        )
        if manifest_id is not None:
            _run(
                tx,
                "usage/acknowledge_manifest",
                subject=s,
                manifestId=manifest_id,
                eventId=event_id,
                now=now,
            )
        return {"eventId": event_id, "repeated": False, "updated": len(updates)}

    return service.db.write_tx(work, label="recordUse")


def reset_usage(service: Service, binding: Binding, atom_id: str | None = None) -> int:
    """Delete usage state of the caller's subject and policy (one atom or all); AV-3."""
    rows = service.db.write(
        "usage/reset", subject=binding.subject, policy=binding.policy, atomId=atom_id
    )
    return int(rows[0]["reset"]) if rows else 0
