"""What ``read`` loads beside its evaluation (RD-2): required closures and cited texts.

Both run in the caller's read transaction (the evaluation's own, on a first page).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphsvc.core.selection_models import Ref, RequiredEdge
from graphsvc.store.connection import Tx, run

__all__ = ["TwoLevels", "cited_texts", "required_two_levels"]


@dataclass(frozen=True)
class TwoLevels:
    """Two levels of the required closure walk.

    ``first``: the required links of the revisions asked for; ``second``: those of
    every target ``first`` makes ``ok`` (``covered`` lists the revisions asked for).
    Edges are in source and link order.
    """

    first: list[RequiredEdge]
    covered: set[Ref]
    second: list[RequiredEdge]


def required_two_levels(tx: Tx, subject: str, refs: list[Ref]) -> TwoLevels:
    """The required links of ``refs`` and of their ok targets, in one round trip."""
    two = run(
        tx,
        "read/required_two_levels",
        subject=subject,
        refs=[{"atomId": r.atom_id, "rev": r.rev} for r in refs],
    )[0]
    return TwoLevels(
        first=[_edge(row) for row in two["first"]],
        covered={Ref(x["atomId"], int(x["rev"])) for x in two["covered"]},
        second=[_edge(row) for row in two["second"]],
    )


def _edge(row: dict[str, Any]) -> RequiredEdge:
    """A required link's status: an observed target stays pinned, a logical one
    follows its head (retired blocks); a moved watch makes it stale (LNK-1)."""
    src = Ref(row["srcAtomId"], int(row["srcRev"]))
    target = None if row["atomId"] is None else Ref(row["atomId"], int(row["rev"]))
    if row["unavailable"] or target is None:
        return RequiredEdge(src, None, "missing")
    if row["at"] == "logical" and row["state"] == "retired":
        return RequiredEdge(src, target, "retired")
    if row["stale"]:
        return RequiredEdge(src, target, "stale")
    return RequiredEdge(src, target, "ok")


def cited_texts(tx: Tx, subject: str, refs: list[tuple[str, int]]) -> dict[tuple[str, int], str]:
    """The texts of the given stored revisions (``(atomId, rev)`` -> text)."""
    rows = run(
        tx,
        "read/cited_texts",
        subject=subject,
        refs=[{"atomId": a, "rev": r} for a, r in refs],
    )
    return {(r["atomId"], int(r["rev"])): r["text"] for r in rows}
