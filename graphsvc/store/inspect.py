"""``inspect``'s reads (SPEC §7): one revision's facts and its one-hop neighbourhood.

A first page now is one round trip (``inspect/first_page``: the subject's state, the
root, its neighbourhood, the entity keys and the page's views). With ``as_of``
(docs/time-travel.md) the root and the neighbourhood are read by the
``cypher/asof/`` queries in one transaction, the rest by their own reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict, cast

from graphsvc.store.connection import Database, Tx, run

__all__ = [
    "FirstPage",
    "NeighborQuery",
    "Neighborhood",
    "RootFacts",
    "RootQuery",
    "load_first_page",
    "load_root_and_neighbors",
]


class RootFacts(TypedDict):
    """The inspected revision's facts (``asof/inspect_root``'s row)."""

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
    """The neighbourhood of a root (``asof/inspect_neighbors``' row)."""

    total: int
    neighbors: list[dict[str, Any]]  # {atomId, rev, via: [via map]}
    unavailable: list[dict[str, Any]]  # via maps of unavailable links


@dataclass(frozen=True)
class RootQuery:
    """Which revision is inspected (None: the head), and whose usage state is shown."""

    subject: str
    atom_id: str
    rev: int | None
    policy: str
    model_id: str

    def params(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "atomId": self.atom_id,
            "rev": self.rev,
            "policy": self.policy,
            "modelId": self.model_id,
        }


@dataclass(frozen=True)
class NeighborQuery:
    """Which links of the root make neighbours, and how many are acquired at most."""

    version: str
    outgoing: bool
    incoming: bool
    roles: list[str] | None
    cap: int


class FirstPage(TypedDict):
    """The row of ``inspect/first_page``."""

    pending: bool  # a purge of the subject is unfinished (LNK-6)
    purgeEpoch: int
    schemaVersion: Any
    root: RootFacts | None  # None: no such revision in the subject
    total: int
    neighbors: list[dict[str, Any]]  # {atomId, rev, via: [via map]}
    unavailable: list[dict[str, Any]]  # via maps of unavailable links
    entityKeys: list[dict[str, Any]]  # {atomId, keys}: the entity keys its head mentions
    views: list[dict[str, Any]]  # rows for graphsvc.store.views.view_from_row


def load_first_page(
    db: Database, root: RootQuery, neighbors: NeighborQuery | None, page_size: int
) -> FirstPage:
    """Everything a first page of ``inspect`` now reads, in one round trip
    (``inspect/first_page``): with ``neighbors`` None no neighbour is acquired; the
    views are the root's and those of the first ``page_size`` neighbours."""
    q = neighbors or NeighborQuery("observed", outgoing=False, incoming=False, roles=None, cap=0)
    rows = db.read_rows(
        "inspect/first_page",
        **root.params(),
        version=q.version,
        outgoing=q.outgoing,
        incoming=q.incoming,
        roles=q.roles,
        cap=q.cap,
        pageSize=page_size,
    )
    return cast(FirstPage, rows[0])


def load_root_and_neighbors(
    db: Database, root_query: RootQuery, neighbors: NeighborQuery | None, as_of: str
) -> tuple[RootFacts | None, Neighborhood | None]:
    """The root's facts and (when ``neighbors`` is given) its neighbourhood as of
    ``as_of``, in one read transaction; ``(None, None)`` when the revision did not
    exist in the subject then."""

    def work(tx: Tx) -> tuple[RootFacts | None, Neighborhood | None]:
        rows = run(tx, "asof/inspect_root", asOf=as_of, **root_query.params())
        if not rows:
            return None, None
        root = cast(RootFacts, rows[0])
        if neighbors is None:
            return root, None
        return root, _neighborhood(tx, root_query, root["rev"], neighbors, as_of)

    return db.read_tx(work, label="inspect")


def _neighborhood(
    tx: Tx, root_query: RootQuery, rev: int, q: NeighborQuery, as_of: str
) -> Neighborhood | None:
    params = {
        "subject": root_query.subject,
        "atomId": root_query.atom_id,
        "rev": rev,
        "version": q.version,
        "outgoing": q.outgoing,
        "incoming": q.incoming,
        "roles": q.roles,
        "cap": q.cap,
    }
    found = run(tx, "asof/inspect_neighbors", asOf=as_of, **params)
    return cast(Neighborhood, found[0]) if found else None
