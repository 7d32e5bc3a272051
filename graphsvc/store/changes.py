"""The change feed as stored (docs/time-travel.md): one ``(:Change)`` per operation.

Every write operation of a subject — a write batch (create, revise, retire; bulk
import batches are write batches), an atomisation (its atoms and the archived
parent) and a purge — records one ``Change`` in its own transaction, numbered by the
subject's ``(:ChangeSequence {subject, last})``. Incrementing ``last`` takes that
node's write lock until commit, so two writers of one subject number their changes
one after the other: the numbers are gap-free and in commit order, and a page read
by number is stable. A purge takes the purged atoms out of earlier records
(``redacted`` counts what was taken) and records itself without naming them.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphsvc.core.views import ChangeRecord
from graphsvc.core.write_models import AtomRef
from graphsvc.store.connection import Database, Tx, run

__all__ = ["changes_page", "record_change", "record_purge"]


def _refs(stored: Sequence[str] | None) -> tuple[AtomRef, ...]:
    out = []
    for s in stored or ():
        atom_id, _, rev = s.rpartition("@")
        out.append(AtomRef(atom_id, int(rev)))
    return tuple(out)


def record_change(
    tx: Tx,
    params: dict[str, object],
    revisions: Sequence[AtomRef],
    kind: str | None,
) -> int:
    """Record the operation that wrote ``revisions`` (``params``: the provenance's
    query parameters); returns its sequence number."""
    rows = run(
        tx,
        "changes/record",
        kind=kind,
        revisions=[r.to_json() for r in revisions],
        **params,
    )
    return int(rows[0]["seq"])


def record_purge(
    tx: Tx,
    subject: str,
    *,
    operation_id: str,
    actor_kind: str | None,
    actor_id: str | None,
    now: str,
    atom_ids: Sequence[str],
) -> int:
    """Scrub the purged atoms from earlier records and record the purge (a count)."""
    run(tx, "changes/scrub", subject=subject, atomIds=list(atom_ids))
    rows = run(
        tx,
        "changes/record_purge",
        subject=subject,
        operationId=operation_id,
        actorKind=actor_kind,
        actorId=actor_id,
        now=now,
        purged=len(atom_ids),
    )
    return int(rows[0]["seq"])


def changes_page(
    db: Database,
    subject: str,
    *,
    since: str | None,
    until: str | None,
    after: int | None,
    limit: int,
) -> list[ChangeRecord]:
    """Up to ``limit`` records after sequence number ``after``, timed in [since, until)."""
    rows = db.read_rows(
        "changes/page", subject=subject, since=since, until=until, after=after, limit=limit
    )
    return [
        ChangeRecord(
            seq=int(r["seq"]),
            operation_id=r["operationId"],
            kind=r["kind"],
            actor_kind=r["actorKind"],
            actor_id=r["actorId"],
            at=r["at"],
            created=_refs(r["created"]),
            revised=_refs(r["revised"]),
            retired=_refs(r["retired"]),
            archived=_refs(r["archived"]),
            purged=int(r["purged"] or 0),
            redacted=int(r["redacted"] or 0),
        )
        for r in rows
    ]
