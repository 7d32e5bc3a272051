"""Facts about the database itself: the server, the schema, the disk-erasure ledger.

The ledger is ``GraphsvcMeta {key: 'erasure'}``: every finished purge counts itself
(:func:`record_purge`), ``graphsvc compact`` writes a new store and resets the count
(:func:`mark_compacted`), ``graphsvc erasure status`` reads it (:func:`erasure_state`);
see docs/erasure.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from graphsvc.store.connection import SCHEMA_VERSION, Database, Tx, run

__all__ = [
    "ErasureState",
    "Readiness",
    "ServerInfo",
    "erasure_state",
    "mark_compacted",
    "readiness",
    "record_purge",
    "server_info",
    "subject_has_atoms",
]


class ServerInfo(TypedDict):
    """The Neo4j server's ``name``, ``version`` and ``edition``."""

    name: str
    version: str
    edition: str


class Readiness(TypedDict):
    """What ``/readyz`` reports when Neo4j answers."""

    neo4j: ServerInfo
    schemaVersion: int | None
    schemaCurrent: bool


@dataclass(frozen=True)
class ErasureState:
    """The disk-erasure ledger; times are ISO-8601 UTC strings (None: never)."""

    pending_purges: int
    oldest_pending_at: str | None
    last_purge_at: str | None
    last_compact_at: str | None


def server_info(db: Database) -> ServerInfo:
    row = db.read("meta/server_components")[0]
    return {"name": row["name"], "version": row["version"], "edition": row["edition"]}


def readiness(db: Database) -> Readiness:
    """Whether Neo4j answers and the schema is current (``/readyz``, ``{ health }``), in
    one round trip.

    Raises:
        StoreError: Neo4j is not reachable.
    """
    row = db.read("meta/health")[0]
    version = row["schemaVersion"]
    return {
        "neo4j": {"name": row["name"], "version": row["version"], "edition": row["edition"]},
        "schemaVersion": version,
        "schemaCurrent": version == SCHEMA_VERSION,
    }


def record_purge(tx: Tx, now: str) -> None:
    """Count a finished purge as awaiting disk erasure (``graphsvc compact``)."""
    run(tx, "erasure/record_purge", now=now)


def erasure_state(db: Database) -> ErasureState:
    row = db.read("erasure/state")[0]
    return ErasureState(
        pending_purges=int(row["pendingPurges"]),
        oldest_pending_at=row["oldestPendingAt"],
        last_purge_at=row["lastPurgeAt"],
        last_compact_at=row["lastCompactAt"],
    )


def mark_compacted(db: Database, now: str) -> int:
    """In a freshly compacted store: reset the ledger; the purges whose bytes the
    compaction removed."""
    return int(db.write("erasure/mark_compacted", now=now)[0]["erasedPurges"])


def subject_has_atoms(db: Database, subject: str) -> bool:
    """Whether ``subject`` holds any atom (of any state)."""
    return bool(db.read("meta/subject_has_atoms", subject=subject)[0]["found"])
