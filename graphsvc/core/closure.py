"""The required closure of a read root (RD-2).

For a root ``r`` the required closure ``C(r)`` is the smallest set of pinned revisions
that contains ``r`` and, for every member, the targets of its ``required`` links. The
store has already resolved each required link to a :class:`RequiredEdge` (logical
targets bound to the head, observed targets pinned), so this module is a plain,
iterative graph walk:

- each pinned revision is visited once, so cycles terminate;
- members come root first, then breadth-first in the stored edge order, which makes
  the order deterministic;
- a required edge whose status is not ``ok`` blocks the root: a ref name alone never
  counts as presented.

What a blocked result reveals is limited on purpose (LNK-2): for an ``unpermitted`` or
``missing`` target only the blocking *source* (a member the caller may see) is named,
and the reason collapses to ``unavailable``, so a caller cannot tell "exists but
hidden" from "does not exist".
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from graphsvc.core.selection_models import BlockedEdge, BlockReason, Ref, RequiredEdge
from graphsvc.errors import InvalidInputError

# BlockedEdge lives with the other value types; re-exported as part of this API.
__all__ = ["BlockReason", "BlockedEdge", "ClosureResult", "required_closure"]


@dataclass(frozen=True, slots=True)
class ClosureResult:
    """The required closure of one root.

    Attributes:
        root: the root the closure was taken of.
        members: the closure, root first, then breadth-first; each revision once.
        blocked: whether any required edge in the closure is not ``ok``.
        blocked_by: the refs that explain the block, each once, in discovery order:
            the member holding each failing edge, followed for ``stale`` / ``retired``
            by that edge's target. Never a missing or unpermitted target.
        blocked_edges: the failing edges in safe form, in discovery order.
        edges_examined: how many required edges the walk looked at (a work measure).
    """

    root: Ref
    members: tuple[Ref, ...]
    blocked: bool
    blocked_by: tuple[Ref, ...]
    blocked_edges: tuple[BlockedEdge, ...]
    edges_examined: int


def required_closure(root: Ref, edges: Mapping[Ref, Sequence[RequiredEdge]]) -> ClosureResult:
    """Compute the required closure of ``root``.

    Args:
        root: the root revision.
        edges: the resolved required links of each revision, keyed by the revision
            holding them; a revision absent from the mapping has none.

    Returns:
        The closure, whether it is blocked, and the safe explanation of the block.

    Raises:
        InvalidInputError: an edge listed under a revision names another revision as
            its source (the store mapped edges wrongly).
    """
    members: list[Ref] = [root]
    seen: set[Ref] = {root}
    blocked_by: list[Ref] = []
    blocked_seen: set[Ref] = set()
    blocked_edges: list[BlockedEdge] = []
    examined = 0

    def note(ref: Ref) -> None:
        if ref not in blocked_seen:
            blocked_seen.add(ref)
            blocked_by.append(ref)

    # An explicit queue instead of recursion: a chain of thousands of required links
    # must not hit Python's recursion limit.
    queue: deque[Ref] = deque([root])
    while queue:
        member = queue.popleft()
        for edge in edges.get(member, ()):
            examined += 1
            if edge.source != member:
                raise InvalidInputError(
                    f"required edge of {edge.source.key} listed under {member.key}"
                )
            if edge.status == "ok":
                target = edge.target
                if target is not None and target not in seen:
                    seen.add(target)
                    members.append(target)
                    queue.append(target)
                continue
            note(member)
            if edge.status in ("stale", "retired"):
                reason: BlockReason = "stale" if edge.status == "stale" else "retired"
                if edge.target is not None:
                    note(edge.target)
                blocked_edges.append(BlockedEdge(member, reason, edge.target))
            else:
                # missing / unpermitted: the target id must not leak, nor which of the
                # two it was.
                blocked_edges.append(BlockedEdge(member, "unavailable", None))

    return ClosureResult(
        root=root,
        members=tuple(members),
        blocked=bool(blocked_edges),
        blocked_by=tuple(blocked_by),
        blocked_edges=tuple(blocked_edges),
        edges_examined=examined,
    )
