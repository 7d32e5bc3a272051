"""The required closure of a root: cycles, blocking, and what a block may reveal (RD-2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphsvc.core.closure import BlockedEdge, required_closure
from graphsvc.core.selection_models import EdgeStatus, Ref, RequiredEdge
from graphsvc.errors import InvalidInputError

A = Ref("a", 1)
B = Ref("b", 1)
C = Ref("c", 1)
D = Ref("d", 1)
HIDDEN = Ref("hidden-secret-id", 4)


def graph(*edges: RequiredEdge) -> dict[Ref, list[RequiredEdge]]:
    out: dict[Ref, list[RequiredEdge]] = {}
    for e in edges:
        out.setdefault(e.source, []).append(e)
    return out


@pytest.mark.req("RD-2")
def test_cycle_terminates_and_visits_each_revision_once() -> None:
    g = graph(RequiredEdge(A, B, "ok"), RequiredEdge(B, C, "ok"), RequiredEdge(C, A, "ok"))
    result = required_closure(A, g)
    assert result.members == (A, B, C)
    assert not result.blocked
    assert result.blocked_by == ()
    assert required_closure(B, g).members == (B, C, A)


@pytest.mark.req("RD-2")
def test_self_loop_and_repeated_edges_visit_once() -> None:
    g = graph(RequiredEdge(A, A, "ok"), RequiredEdge(A, B, "ok"), RequiredEdge(A, B, "ok"))
    assert required_closure(A, g).members == (A, B)


@pytest.mark.req("RD-2")
def test_root_without_required_links_is_its_own_closure() -> None:
    result = required_closure(A, {})
    assert (result.members, result.blocked, result.edges_examined) == ((A,), False, 0)


@pytest.mark.req("RD-2")
def test_members_come_root_first_then_breadth_first_in_edge_order() -> None:
    g = graph(
        RequiredEdge(A, C, "ok"),
        RequiredEdge(A, B, "ok"),
        RequiredEdge(C, D, "ok"),
        RequiredEdge(B, D, "ok"),
    )
    assert required_closure(A, g).members == (A, C, B, D)


@pytest.mark.req("RD-2")
def test_very_long_chain_needs_no_recursion() -> None:
    refs = [Ref(f"n{i}", 1) for i in range(20_000)]
    g = graph(*(RequiredEdge(refs[i], refs[i + 1], "ok") for i in range(len(refs) - 1)))
    result = required_closure(refs[0], g)
    assert len(result.members) == 20_000
    assert result.members[-1] == refs[-1]


@pytest.mark.req("RD-2", "LNK-2")
@pytest.mark.parametrize("status", ["missing", "unpermitted"])
def test_missing_or_unpermitted_target_blocks_without_naming_it(status: EdgeStatus) -> None:
    g = graph(RequiredEdge(A, B, "ok"), RequiredEdge(B, HIDDEN, status))
    result = required_closure(A, g)
    assert result.blocked
    assert result.blocked_by == (B,)
    assert result.blocked_edges == (BlockedEdge(B, "unavailable", None),)
    assert HIDDEN not in result.members
    assert "hidden-secret-id" not in repr(result)


@pytest.mark.req("RD-2")
def test_missing_and_unpermitted_read_the_same() -> None:
    missing = required_closure(A, graph(RequiredEdge(A, HIDDEN, "missing")))
    hidden = required_closure(A, graph(RequiredEdge(A, HIDDEN, "unpermitted")))
    assert missing == hidden


@pytest.mark.req("RD-2", "LNK-1")
def test_stale_required_target_blocks_and_names_the_permitted_target() -> None:
    result = required_closure(A, graph(RequiredEdge(A, B, "stale")))
    assert result.blocked
    assert result.blocked_by == (A, B)
    assert result.blocked_edges == (BlockedEdge(A, "stale", B),)
    assert result.members == (A,)


@pytest.mark.req("RD-2")
def test_logical_link_to_retired_head_blocks() -> None:
    # The store binds a logical required link to the head; a retired head is "retired".
    result = required_closure(A, graph(RequiredEdge(A, Ref("b", 2), "retired")))
    assert result.blocked
    assert result.blocked_edges == (BlockedEdge(A, "retired", Ref("b", 2)),)


@pytest.mark.req("RD-2")
def test_observed_link_to_later_retired_atom_stays_pinned_and_unblocked() -> None:
    # b@1 was observed; b was retired later (head b@2). The pinned revision is immutable,
    # so the store reports the observed edge as ok and the closure presents b@1.
    pinned = Ref("b", 1)
    result = required_closure(A, graph(RequiredEdge(A, pinned, "ok")))
    assert not result.blocked
    assert result.members == (A, pinned)


@pytest.mark.req("RD-2")
def test_block_deep_in_the_closure_blocks_the_root() -> None:
    g = graph(RequiredEdge(A, B, "ok"), RequiredEdge(B, C, "ok"), RequiredEdge(C, D, "missing"))
    result = required_closure(A, g)
    assert result.blocked
    assert result.blocked_by == (C,)
    assert result.members == (A, B, C)


@pytest.mark.req("RD-2")
def test_edge_filed_under_the_wrong_revision_is_rejected() -> None:
    with pytest.raises(InvalidInputError):
        required_closure(A, {A: [RequiredEdge(B, C, "ok")]})


@pytest.mark.req("RD-2")
def test_ok_edge_must_name_a_target() -> None:
    with pytest.raises(InvalidInputError):
        RequiredEdge(A, None, "ok")


# -- property: random graphs with cycles ----------------------------------------------

_STATUSES: list[EdgeStatus] = ["ok", "ok", "ok", "ok", "missing", "unpermitted", "stale", "retired"]


@st.composite
def _graphs(draw: st.DrawFn) -> tuple[list[Ref], dict[Ref, list[RequiredEdge]]]:
    n = draw(st.integers(1, 12))
    refs = [Ref(f"v{i}", 1) for i in range(n)]
    outside = [Ref(f"x{i}", 1) for i in range(3)]
    g: dict[Ref, list[RequiredEdge]] = {}
    for _ in range(draw(st.integers(0, 3 * n))):
        src = draw(st.sampled_from(refs))
        status = draw(st.sampled_from(_STATUSES))
        target = draw(st.sampled_from(refs if status == "ok" else refs + outside))
        g.setdefault(src, []).append(RequiredEdge(src, target, status))
    return refs, g


def _reference_members(root: Ref, g: Mapping[Ref, Sequence[RequiredEdge]]) -> set[Ref]:
    seen = {root}
    frontier = [root]
    while frontier:
        nxt = []
        for m in frontier:
            for e in g.get(m, ()):
                if e.status == "ok" and e.target is not None and e.target not in seen:
                    seen.add(e.target)
                    nxt.append(e.target)
        frontier = nxt
    return seen


@pytest.mark.req("RD-2")
@settings(max_examples=300, deadline=None)
@given(_graphs(), st.data())
def test_closure_of_random_graph_is_minimal_complete_and_safe(
    case: tuple[list[Ref], dict[Ref, list[RequiredEdge]]], data: st.DataObject
) -> None:
    refs, g = case
    root = data.draw(st.sampled_from(refs))
    result = required_closure(root, g)
    members = set(result.members)
    assert result.members[0] == root
    assert len(members) == len(result.members)  # each revision once
    assert members == _reference_members(root, g)  # complete and minimal
    failing = [e for m in result.members for e in g.get(m, ()) if e.status != "ok"]
    assert result.blocked == bool(failing)
    assert len(result.blocked_edges) == len(failing)
    # blocked_by names only members and stale/retired targets: never a target whose
    # only reason for appearing would be a missing or unpermitted edge.
    allowed = members | {e.target for e in failing if e.status in ("stale", "retired")}
    assert set(result.blocked_by) <= allowed
    for be in result.blocked_edges:
        if be.reason == "unavailable":
            assert be.target is None
