"""The reads behind the process's head mirrors (:mod:`graphsvc.process_state.head_mirrors`):
the subject's state and the mirror's generation, every current head, and the heads the
change feed names since a sequence."""

from __future__ import annotations

from typing import Any

from graphsvc.core.head_mirror import HeadMirror, MirrorHead
from graphsvc.store.connection import Tx, run

__all__ = ["mirror_changes", "mirror_heads", "mirror_state"]


def mirror_state(tx: Tx, subject: str) -> dict[str, Any]:
    """The subject's state and the mirror's generation (``search/mirror_state``)."""
    return run(tx, "search/mirror_state", subject=subject)[0]


def mirror_heads(tx: Tx, subject: str, max_heads: int) -> HeadMirror | None:
    """A mirror of every current head of ``subject`` (``search/mirror_heads``); None
    when it holds more than ``max_heads``."""
    rows = run(tx, "search/mirror_heads", subject=subject, max=max_heads)
    if not rows or int(rows[0]["size"]) > max_heads:
        return None
    return HeadMirror(MirrorHead.from_row(r) for r in rows if r["atomId"] is not None)


def mirror_changes(tx: Tx, subject: str, since: int) -> dict[str, MirrorHead | None]:
    """The heads of the atoms the change feed names after ``since`` (None: no current
    head any more), by atomId (``search/mirror_changes``)."""
    rows = run(tx, "search/mirror_changes", subject=subject, since=since)
    changed: dict[str, MirrorHead | None] = {}
    for row in rows:
        atom_id = str(row["atomId"])
        changed[atom_id] = None if row["rev"] is None else MirrorHead.from_row(row)
    return changed
