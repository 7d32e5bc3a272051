"""Lineage with its signatures checked (the typed ``lineageGraph``, SIG-1, SIG-4).

The host layer holds the signing keys, so checking a stored derives_from edge
against them lives here, next to :func:`graphsvc.atomise.lineage.lineage`.
"""

from __future__ import annotations

from collections.abc import Callable

from graphsvc.atomise.lineage import lineage
from graphsvc.core.binding import Binding
from graphsvc.core.lineage_views import LineageGraphView, lineage_graph_view
from graphsvc.core.signing import signature_status
from graphsvc.ops.guards import refuse_if_purge_pending
from graphsvc.store.connection import Database
from graphsvc.store.graph import lineage_of

__all__ = ["lineage_graph"]


def lineage_graph(
    db: Database,
    public_keys: Callable[[], dict[str, bytes]],
    binding: Binding,
    atom_id: str,
    depth: int | None = None,
    as_of: str | None = None,
) -> LineageGraphView:
    """API-5's lineage graph with every derives_from edge's signature checked.

    Args:
        db: the store.
        public_keys: loads keyId → public key of the deployment's signing keys,
            current and retired (called only when there are derives_from edges).
        binding: the caller.
        atom_id: the root atom.
        depth: derives_from hops from the root (see :func:`lineage`).
        as_of: the graph as of this instant (docs/time-travel.md); None: now.

    Returns :func:`graphsvc.atomise.lineage.lineage`'s graph as a typed view, each
    derives_from edge with ``signature`` (the stored hex) and ``signature_status``
    (``verified`` | ``invalid`` | ``unknown_key``).

    Raises:
        InvalidInputError: depth out of range.
        NotFoundError: no such atom in the caller's subject.
        PurgePendingError: a purge of the subject has not finished.
    """
    refuse_if_purge_pending(db, binding.subject)
    graph = lineage(db, binding, atom_id, depth, as_of).to_json()
    derived = [e for e in graph["edges"] if e["type"] == "derives_from"]
    stored = lineage_of(db, binding.subject, [(e["source"], int(e["fromRev"])) for e in derived])
    keys = public_keys() if derived else {}
    for e in derived:
        found = [
            s
            for s in stored.get((e["source"], int(e["fromRev"])), {}).get("derivesFrom", [])
            if s["toAtomId"] == e["target"] and int(s["toRev"]) == int(e["toRev"])
        ]
        e["signature"] = found[0]["signature"] if found else None
        e["signatureStatus"] = (
            signature_status(binding.subject, found[0], keys) if found else "invalid"
        )
    return lineage_graph_view(graph)
