"""The rows of a ranking (:meth:`graphsvc.ops.evaluate.Evaluation.ranked_rows`): what a
frozen evaluation stores and the pages of a search or a read are cut from.

Typed dicts, not dataclasses: a row is the stored payload's own shape
(:mod:`graphsvc.core.frozen_payload` stores the rows by column and a later page
decodes them back as dicts), and its breakdown is sent as the ``scoreBreakdown`` JSON
of SPEC API-6 as it is (GraphQL's typed sibling is ``SearchHit.breakdown``). Objects
would be converted to and from dicts on every search, for nothing.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

__all__ = ["RankedRow", "ScoreBreakdown"]


class ScoreBreakdown(TypedDict):
    """How one node's score was made (SPEC §5, ACT-1…ACT-4, ENT-4)."""

    match: float
    semantic: float | None
    lexical: float | None
    usage: float
    usageFactor: float
    base: float
    propagatedShare: float
    entityShare: float
    candidate: bool


class RankedRow(TypedDict):
    """One scored atom of a ranking; the leading rows carry their breakdown."""

    atomId: str
    rev: int
    score: float
    breakdown: NotRequired[ScoreBreakdown]
