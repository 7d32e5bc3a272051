"""Load AtomViews (the public form of revisions) in one round trip."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from graphsvc.core.head_mirror import HeadMirror
from graphsvc.core.write_models import AtomLinkView, AtomRef, AtomView
from graphsvc.store.connection import Database, Tx, run

__all__ = ["load_views", "view_from_row"]


def load_views(
    db: Database,
    subject: str,
    refs: Iterable[AtomRef],
    tx: Tx | None = None,
    as_of: str | None = None,
    mirror: HeadMirror | None = None,
) -> dict[AtomRef, AtomView]:
    """Views of the given revisions of ``subject``; absent ones are simply missing.

    With ``as_of`` (docs/time-travel.md): the views as of that instant (``asof/atom_views``).
    With ``mirror`` (the subject's mirror an evaluation came from): the heads it holds
    are shown from it, the rest read. Reads are read-committed and a mirror only moves
    forward, so either shows a committed state no older than the evaluation's.
    """
    wanted = list(dict.fromkeys(refs))
    found: dict[AtomRef, AtomView] = {}
    if mirror is not None and as_of is None:
        for ref in wanted:
            view = mirror.view(ref)
            if view is not None:
                found[ref] = view
        wanted = [r for r in wanted if r not in found]
    params: dict[str, Any] = {
        "subject": subject,
        "refs": [{"atomId": r.atom_id, "rev": r.rev} for r in wanted],
    }
    if not params["refs"]:
        return found
    if as_of is not None:
        rows = db.read_rows("asof/atom_views", asOf=as_of, **params)
    elif tx is not None:
        rows = run(tx, "view/atom_views", **params)
    else:
        rows = db.read_rows("view/atom_views", **params)
    views = (view_from_row(row) for row in rows)
    return {**found, **{v.ref: v for v in views}}


def view_from_row(row: dict[str, Any]) -> AtomView:
    links = tuple(
        AtomLinkView(
            role=link["role"],
            at=link["at"],
            required=bool(link["required"]),
            order_key=link.get("orderKey"),
            target=None
            if link["unavailable"] or link.get("atomId") is None
            else AtomRef(link["atomId"], int(link["rev"])),
            unavailable=bool(link["unavailable"]),
        )
        for link in row.get("links") or []
    )
    sources = tuple(json.loads(row["sources"])) if row.get("sources") else ()
    return AtomView(
        atom_id=row["atomId"],
        rev=int(row["rev"]),
        state=row["state"],
        text=row["text"] if row.get("text") is not None else "",
        head=bool(row["head"]),
        links=links,
        sources=sources,
        atom_of=row.get("atomOf"),
        atomised_into=row.get("atomisedInto"),
        archived_at=row.get("archivedAt"),
    )
