"""``inspect``'s reads (SPEC §7): one revision's facts and its one-hop neighbourhood.

With ``as_of`` (docs/time-travel.md) both reads run their ``cypher/asof/`` twins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict, cast

from graphsvc.store.connection import Database, Tx, run

__all__ = ["NeighborQuery", "Neighborhood", "RootFacts", "load_root_and_neighbors"]


class RootFacts(TypedDict):
    """The row of ``inspect/root``."""

    atomId: str
    rev: int
    state: str
    digest: str
    headRev: int
    headState: str | None
    atomisedInto: int | None
    archivedAt: Any
    usage: str | None  # the caller's usage state as JSON, None when never used
    watches: list[dict[str, Any]]  # {atomId, rev, headRev, moved}
    requiredLinks: int
    requiredBlocked: int


class Neighborhood(TypedDict):
    """The row of ``inspect/neighbors``."""

    total: int
    neighbors: list[dict[str, Any]]  # {atomId, rev, via: [via map]}
    unavailable: list[dict[str, Any]]  # via maps of unavailable links


@dataclass(frozen=True)
class NeighborQuery:
    """Which links of the root make neighbours, and how many are acquired at most."""

    version: str
    outgoing: bool
    incoming: bool
    roles: list[str] | None
    cap: int


def load_root_and_neighbors(
    db: Database,
    *,
    subject: str,
    atom_id: str,
    rev: int | None,
    policy: str,
    model_id: str,
    neighbors: NeighborQuery | None,
    as_of: str | None = None,
) -> tuple[RootFacts | None, Neighborhood | None]:
    """The root's facts and (when ``neighbors`` is given) its neighbourhood, in one read
    transaction; ``(None, None)`` when the revision does not exist in ``subject``."""

    def work(tx: Tx) -> tuple[RootFacts | None, Neighborhood | None]:
        params = {
            "subject": subject,
            "atomId": atom_id,
            "rev": rev,
            "policy": policy,
            "modelId": model_id,
        }
        if as_of is None:
            rows = run(tx, "inspect/root", **params)
        else:
            rows = run(tx, "asof/inspect_root", asOf=as_of, **params)
        if not rows:
            return None, None
        root = cast(RootFacts, rows[0])
        if neighbors is None:
            return root, None
        return root, _neighborhood(tx, subject, atom_id, root["rev"], neighbors, as_of)

    return db.read_tx(work, label="inspect")


def _neighborhood(
    tx: Tx, subject: str, atom_id: str, rev: int, q: NeighborQuery, as_of: str | None
) -> Neighborhood | None:
    params = {
        "subject": subject,
        "atomId": atom_id,
        "rev": rev,
        "version": q.version,
        "outgoing": q.outgoing,
        "incoming": q.incoming,
        "roles": q.roles,
        "cap": q.cap,
    }
    if as_of is None:
        found = run(tx, "inspect/neighbors", **params)
    else:
        found = run(tx, "asof/inspect_neighbors", asOf=as_of, **params)
    return cast(Neighborhood, found[0]) if found else None
