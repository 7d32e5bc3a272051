"""Frozen value objects of the read pipeline (SPEC §8, RD-1…RD-8).

The store resolves everything that needs the database — permissions, heads, stale
watches, bodies — and hands the pure selection code these values:

- :class:`Ref`: one pinned revision (``atomId@rev``).
- :class:`PublicLink` / :class:`Citation`: the public links and source citations of a
  body, already in the form a model may see (an unavailable link carries no target,
  LNK-2).
- :class:`Body`: one presentable revision.
- :class:`RequiredEdge`: one ``required`` link of a revision, already resolved: a
  logical target is bound to the current head (a retired or purged head shows up as
  ``retired`` / ``missing``), an observed target stays pinned to its revision, so a
  later retire of that atom does not block it (RD-2).
- :class:`Candidate`: one ranked root.

And what the pipeline hands back: :class:`BlockedEdge` (why a root is blocked, in a
form safe to show), :class:`PackedItem` and :class:`PackResult` (the packer's outcome
with its JSON views).

Every constructor validates its invariants and raises
:class:`~graphsvc.errors.InvalidInputError`, so downstream code can trust the values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from graphsvc.errors import InvalidInputError

__all__ = [
    "RANGE_UNITS",
    "WORK_UNIT",
    "BlockReason",
    "BlockedEdge",
    "Body",
    "Candidate",
    "Citation",
    "EdgeStatus",
    "ItemRole",
    "LinkAt",
    "PackResult",
    "PackedItem",
    "PublicLink",
    "RangeUnit",
    "Ref",
    "RequiredEdge",
    "Selection",
    "unit_length",
]

LinkAt = Literal["logical", "observed"]
EdgeStatus = Literal["ok", "missing", "unpermitted", "stale", "retired"]
BlockReason = Literal["unavailable", "stale", "retired"]
ItemRole = Literal["root", "required"]
RangeUnit = Literal["byte", "char", "line"]

RANGE_UNITS: tuple[RangeUnit, ...] = ("byte", "char", "line")
_LINK_ATS: tuple[LinkAt, ...] = ("logical", "observed")
# How packing work is measured (RD-6); reported in the diagnostics.
WORK_UNIT = "characters passed to count_tokens + 1 per call + 1 per required edge examined"
_EDGE_STATUSES: tuple[EdgeStatus, ...] = ("ok", "missing", "unpermitted", "stale", "retired")


def _is_int(value: object) -> bool:
    # bool is a subclass of int; a rev or an offset of True is a caller bug, not 1.
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, order=True, slots=True)
class Ref:
    """One pinned revision of an atom.

    Ordering is by ``(atom_id, rev)``, so sorted refs are deterministic.

    Attributes:
        atom_id: the library-issued atom id (non-empty).
        rev: the revision number, 1 or more.
    """

    atom_id: str
    rev: int
    # The hash of (atom_id, rev), computed once: refs key the packer's and the read's
    # dicts and sets thousands of times a read, and a dataclass's own __hash__ builds
    # the tuple and hashes it again on every lookup. Not part of equality or order.
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.atom_id, str) or not self.atom_id:
            raise InvalidInputError("Ref.atom_id must be a non-empty string")
        if not _is_int(self.rev) or self.rev < 1:
            raise InvalidInputError("Ref.rev must be an integer >= 1")
        object.__setattr__(self, "_hash", hash((self.atom_id, self.rev)))

    def __hash__(self) -> int:
        return self._hash

    @property
    def key(self) -> str:
        """The compact form ``"atomId@rev"`` used in the read text."""
        return f"{self.atom_id}@{self.rev}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of the public API: ``{"atomId": ..., "rev": ...}``."""
        return {"atomId": self.atom_id, "rev": self.rev}


@dataclass(frozen=True, slots=True)
class PublicLink:
    """A link of a body as a model may see it.

    An available link names its target; an unavailable one (target unpermitted or
    missing) carries no target at all (LNK-2), so a body can never smuggle the id of
    something the caller may not see.

    Attributes:
        role: the link's role name (never interpreted, CORE-4).
        at: ``"logical"`` (follows the head) or ``"observed"`` (pinned).
        required: whether the target's body must be presented with this one.
        order_key: optional caller-chosen ordering key.
        target: the bound target revision; ``None`` exactly when ``unavailable``.
        unavailable: the target is not permitted or missing.
    """

    role: str
    at: LinkAt
    required: bool
    order_key: str | None = None
    target: Ref | None = None
    unavailable: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.role, str) or not self.role:
            raise InvalidInputError("PublicLink.role must be a non-empty string")
        if self.at not in _LINK_ATS:
            raise InvalidInputError("PublicLink.at must be 'logical' or 'observed'")
        if self.order_key is not None and not isinstance(self.order_key, str):
            raise InvalidInputError("PublicLink.order_key must be a string or None")
        if self.unavailable and self.target is not None:
            # Refuse rather than silently drop: a target on an unavailable link means the
            # store failed to scrub it, and that must surface in tests, not in a read.
            raise InvalidInputError("an unavailable PublicLink must not carry a target")
        if not self.unavailable and self.target is None:
            raise InvalidInputError("an available PublicLink must name its target")


def unit_length(text: str, unit: RangeUnit) -> int:
    """Length of ``text`` measured in a range unit.

    ``byte`` counts UTF-8 bytes, ``char`` counts code points, ``line`` counts lines,
    where a line is a run of characters ending in ``"\\n"`` or at the end of the text
    (so ``"a\\nb"`` and ``"a\\nb\\n"`` both have two lines, ``""`` has none).

    Args:
        text: the text to measure.
        unit: ``"byte"``, ``"char"`` or ``"line"``.

    Returns:
        The length in that unit.

    Raises:
        InvalidInputError: ``unit`` is not a range unit.
    """
    if unit == "char":
        return len(text)
    if unit == "byte":
        return len(text.encode("utf-8"))
    if unit == "line":
        if not text:
            return 0
        return text.count("\n") + (0 if text.endswith("\n") else 1)
    raise InvalidInputError(f"unknown range unit {unit!r}")


@dataclass(frozen=True, slots=True)
class Citation:
    """A declared source range (MAN-3), optionally with its verified text.

    A citation with ``quoted_text`` is a *quoting* citation: the store has checked that
    ``quoted_text`` is exactly the cited range of the source (``verified``), so the read
    text may present it once as evidence (RD-4).

    Attributes:
        uri: the source (``atom:<atomId>`` for an atom of the store).
        version: the source version, if declared.
        digest: the source digest, if declared.
        start: range start (inclusive), or ``None`` when no range is cited.
        end: range end (exclusive), or ``None``.
        unit: range unit, or ``None``.
        verified: the store verified the range against the source.
        quoted_text: the verified text of the range, or ``None``.
    """

    uri: str
    version: str | None = None
    digest: str | None = None
    start: int | None = None
    end: int | None = None
    unit: RangeUnit | None = None
    verified: bool = False
    quoted_text: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.uri, str) or not self.uri:
            raise InvalidInputError("Citation.uri must be a non-empty string")
        for name in ("version", "digest"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise InvalidInputError(f"Citation.{name} must be a string or None")
        parts = (self.start, self.end, self.unit)
        if any(p is None for p in parts) and any(p is not None for p in parts):
            raise InvalidInputError("Citation start, end and unit are given together or not")
        if self.start is not None and self.end is not None:
            if not _is_int(self.start) or not _is_int(self.end):
                raise InvalidInputError("Citation start and end must be integers")
            if not 0 <= self.start <= self.end:
                raise InvalidInputError("Citation range must satisfy 0 <= start <= end")
            if self.unit not in RANGE_UNITS:
                raise InvalidInputError("Citation.unit must be 'byte', 'char' or 'line'")
        if self.quoted_text is not None:
            if not self.verified:
                # Unverified text must never be presented as if it were the source.
                raise InvalidInputError("Citation.quoted_text requires verified=True")
            if self.unit is None or self.start is None or self.end is None:
                raise InvalidInputError("Citation.quoted_text requires a range")
            if unit_length(self.quoted_text, self.unit) != self.end - self.start:
                raise InvalidInputError("Citation.quoted_text does not match its range length")

    @property
    def has_range(self) -> bool:
        """Whether the citation names a range of the source."""
        return self.unit is not None

    @property
    def quotes(self) -> bool:
        """Whether this citation carries verified source text (evidence)."""
        return self.verified and self.quoted_text is not None


@dataclass(frozen=True, slots=True)
class Body:
    """One presentable revision: its text, public links and source citations.

    Attributes:
        ref: the revision.
        text: the body text.
        links: the public links, in stored order.
        sources: the source citations, in stored order.
    """

    ref: Ref
    text: str
    links: tuple[PublicLink, ...] = ()
    sources: tuple[Citation, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.ref, Ref):
            raise InvalidInputError("Body.ref must be a Ref")
        if not isinstance(self.text, str):
            raise InvalidInputError("Body.text must be a string")
        # Accept any sequence but store tuples, so bodies stay hashable and immutable.
        object.__setattr__(self, "links", tuple(self.links))
        object.__setattr__(self, "sources", tuple(self.sources))
        if not all(isinstance(link, PublicLink) for link in self.links):
            raise InvalidInputError("Body.links must hold PublicLink values")
        if not all(isinstance(c, Citation) for c in self.sources):
            raise InvalidInputError("Body.sources must hold Citation values")


@dataclass(frozen=True, slots=True)
class RequiredEdge:
    """A ``required`` link of a revision, as resolved by the store.

    Attributes:
        source: the revision holding the link.
        target: the bound target; ``None`` is allowed only when the status is not ok
            (the store need not even say which revision was missing or unpermitted).
        status: ``ok`` (the target can be presented), ``missing`` (absent or purged),
            ``unpermitted`` (not visible to the caller), ``stale`` (a declared watch no
            longer holds), ``retired`` (a logical link whose head is retired).
    """

    source: Ref
    target: Ref | None
    status: EdgeStatus

    def __post_init__(self) -> None:
        if self.status not in _EDGE_STATUSES:
            raise InvalidInputError(f"unknown required-edge status {self.status!r}")
        if self.status == "ok" and self.target is None:
            raise InvalidInputError("an ok RequiredEdge must name its target")


@dataclass(frozen=True, slots=True)
class Candidate:
    """A ranked root of a read.

    Attributes:
        ref: the root revision.
        score: its activation score (finite); higher is better.
    """

    ref: Ref
    score: float

    def __post_init__(self) -> None:
        if isinstance(self.score, bool) or not isinstance(self.score, (int, float)):
            raise InvalidInputError("Candidate.score must be a number")
        if not math.isfinite(self.score):
            raise InvalidInputError("Candidate.score must be finite")


@dataclass(frozen=True, slots=True)
class BlockedEdge:
    """One required edge that blocks a root, in a form safe to show the caller.

    Attributes:
        source: the closure member holding the required link.
        reason: ``unavailable`` (missing or unpermitted — deliberately not told
            apart), ``stale`` or ``retired``.
        target: the target revision for ``stale`` / ``retired`` (the caller may see
            it); always ``None`` for ``unavailable``.
    """

    source: Ref
    reason: BlockReason
    target: Ref | None


@dataclass(frozen=True, slots=True)
class PackedItem:
    """One entry of a read's ``items`` (RD-5: refs and metadata, never the body).

    Attributes:
        ref: the revision.
        role: ``root`` (a ranked root) or ``required`` (in a root's closure only).
        score: the root's score; ``None`` for a required-only body.
        blocked: the root is blocked (RD-2); its body is not presented.
    """

    ref: Ref
    role: ItemRole
    score: float | None
    blocked: bool

    def to_dict(self) -> dict[str, Any]:
        """The ``ReadItem`` JSON form."""
        return {
            "ref": self.ref.to_dict(),
            "role": self.role,
            "score": self.score,
            "blocked": self.blocked,
        }


@dataclass(frozen=True, slots=True)
class Selection:
    """What a read's ``selection`` says of its packing (RD-4, RD-6)."""

    baseline_complete: bool
    coverage_certified: bool
    tokens: int
    budget: int

    def to_dict(self) -> dict[str, Any]:
        """The ``Selection`` JSON form."""
        return {
            "baselineComplete": self.baseline_complete,
            "coverageCertified": self.coverage_certified,
            "tokens": self.tokens,
            "budget": self.budget,
        }


@dataclass(frozen=True, slots=True)
class PackResult:
    """The outcome of :func:`graphsvc.core.packing.pack`.

    Attributes:
        text: the read text (formatVersion 2), or ``""`` when not even the empty
            render fits the budget.
        tokens: ``count_tokens(text)`` (0 for ``""``); always ``<= budget``.
        budget: the memory token budget.
        items: presented revisions in text order, then blocked roots in rank order.
        blocked_roots: roots blocked by their required closure, in rank order.
        baseline_complete: phase 1 finished within the work limit.
        improvement_stopped_early: phase 2 ran out of work with candidates left.
        work_used: work units spent (see :data:`WORK_UNIT`).
        work_limit: the work limit.
        baseline_refs: revisions presented after phase 1, in text order.
        baseline_roots: roots presented after phase 1, in rank order.
        min_budget_for: left-out root → the smallest budget that fits its closure
            rendered alone (only for roots the leftover work could measure).
        left_out: non-blocked roots not presented because they did not fit.
        unvisited: roots never decided because work ran out.
        added_by_improvement: roots added in phase 2, in the order added.
        blocked_by: blocked root → refs that explain the block (never a missing or
            unpermitted target).
        blocked_edges: blocked root → its failing edges in safe form.
        empty_exceeds_budget: not even the empty render fits the budget.
        coverage_certified: always ``False`` (RD-7).
    """

    text: str
    tokens: int
    budget: int
    items: tuple[PackedItem, ...]
    blocked_roots: tuple[Ref, ...]
    baseline_complete: bool
    improvement_stopped_early: bool
    work_used: int
    work_limit: int
    baseline_refs: tuple[Ref, ...]
    baseline_roots: tuple[Ref, ...]
    min_budget_for: Mapping[Ref, int] = field(hash=False)
    left_out: tuple[Ref, ...]
    unvisited: tuple[Ref, ...]
    added_by_improvement: tuple[Ref, ...]
    blocked_by: Mapping[Ref, tuple[Ref, ...]] = field(hash=False)
    blocked_edges: Mapping[Ref, tuple[BlockedEdge, ...]] = field(hash=False)
    empty_exceeds_budget: bool = False
    coverage_certified: Literal[False] = False

    @property
    def presented(self) -> tuple[Ref, ...]:
        """Revisions whose bodies are in ``text``, in text order."""
        return tuple(i.ref for i in self.items if not i.blocked)

    def items_dicts(self) -> list[dict[str, Any]]:
        """The ``items`` list in JSON form."""
        return [i.to_dict() for i in self.items]

    def selection(self) -> Selection:
        """What the read result's ``selection`` says."""
        return Selection(self.baseline_complete, self.coverage_certified, self.tokens, self.budget)

    def selection_dict(self) -> dict[str, Any]:
        """The ``Selection`` JSON form of the read result."""
        return self.selection().to_dict()

    def diagnostics(self) -> dict[str, Any]:
        """The ``selection`` part of the read diagnostics (CUR-3), JSON-safe."""

        def edge(e: BlockedEdge) -> dict[str, Any]:
            out: dict[str, Any] = {"source": e.source.key, "reason": e.reason}
            if e.target is not None:
                out["target"] = e.target.key
            return out

        return {
            "baselineComplete": self.baseline_complete,
            "improvementStoppedEarly": self.improvement_stopped_early,
            "coverageCertified": self.coverage_certified,
            "tokens": self.tokens,
            "budget": self.budget,
            "workUsed": self.work_used,
            "workLimit": self.work_limit,
            "workUnit": WORK_UNIT,
            "emptyRenderExceedsBudget": self.empty_exceeds_budget,
            "blockedRoots": [
                {
                    "ref": r.key,
                    "blockedBy": [b.key for b in self.blocked_by.get(r, ())],
                    "edges": [edge(e) for e in self.blocked_edges.get(r, ())],
                }
                for r in self.blocked_roots
            ],
            "leftOut": [r.key for r in self.left_out],
            "minBudgetFor": {r.key: n for r, n in self.min_budget_for.items()},
            "unvisited": [r.key for r in self.unvisited],
            "addedByImprovement": [r.key for r in self.added_by_improvement],
            "baselineRoots": [r.key for r in self.baseline_roots],
        }
