"""Replica registrations (``:ServiceReplica``): who serves this database, with which keys.

See :mod:`graphsvc.ops.replicas` for what the registrations are for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphsvc.store.connection import Database, Tx, run

__all__ = ["LiveReplica", "Registration", "live_replicas", "register", "release", "renew"]


@dataclass(frozen=True)
class LiveReplica:
    """Another process serving this database whose lease has not run out."""

    replica_id: str
    fingerprint: str
    host: str
    pid: int
    started_at: float


@dataclass(frozen=True)
class Registration:
    """What this process writes about itself."""

    replica_id: str
    fingerprint: str
    host: str
    pid: int
    lease_s: float
    forget_s: float


def _live(rows: list[dict[str, Any]]) -> list[LiveReplica]:
    return [
        LiveReplica(
            replica_id=str(r["replicaId"]),
            fingerprint=str(r["fingerprint"]),
            host=str(r["host"]),
            pid=int(r["pid"]),
            started_at=float(r["startedAt"]),
        )
        for r in rows
    ]


def live_replicas(db: Database, now: float) -> list[LiveReplica]:
    """Every serving process whose lease has not run out (``graphsvc reembed`` waits
    for none)."""
    return _live(db.read("replica/live_others", now=now, replicaId=""))


def register(db: Database, me: Registration, now: float) -> list[LiveReplica]:
    """Register ``me`` unless a live replica has another fingerprint; returns those.

    One transaction: it first takes the registry's lock, so of two replicas starting
    at the same moment the second sees the first. Nothing is written when the
    returned list is not empty.
    """

    def work(tx: Tx) -> list[LiveReplica]:
        run(tx, "replica/lock", now=now)
        others = _live(run(tx, "replica/live_others", now=now, replicaId=me.replica_id))
        clashing = [o for o in others if o.fingerprint != me.fingerprint]
        if not clashing:
            _upsert(tx, me, now)
        return clashing

    return db.write_tx(work, label="replica/register")


def renew(db: Database, me: Registration, now: float) -> None:
    """Extend this replica's lease (re-registering it if it had been forgotten)."""
    db.write_tx(lambda tx: _upsert(tx, me, now), label="replica/renew")


def release(db: Database, replica_id: str) -> None:
    """Give the lease back (a clean stop)."""
    db.write("replica/release", replicaId=replica_id)


def _upsert(tx: Tx, me: Registration, now: float) -> None:
    run(
        tx,
        "replica/upsert",
        replicaId=me.replica_id,
        fingerprint=me.fingerprint,
        host=me.host,
        pid=me.pid,
        now=now,
        leaseS=me.lease_s,
        forgetS=me.forget_s,
    )
