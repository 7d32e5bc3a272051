"""Pure activation core: match fusion, usage boost, transition matrix, solver (ACT-1..7)."""

from __future__ import annotations

import inspect
import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphsvc.core.activation import (
    DEFAULT_BETA,
    DEFAULT_PROPAGATION,
    DEFAULT_TOL,
    ActivationResult,
    PropagationTable,
    RoleWeights,
    acquisition_order,
    build_edges,
    cosine_from_neo4j,
    fuse_match,
    fuse_matches,
    neo4j_cosines,
    normalise_lexical,
    propagate,
    transition_matrix,
    usage_boost,
)
from graphsvc.errors import InvalidInputError

BIG_WORK = 10**12


@st.composite
def graphs(draw: st.DrawFn) -> tuple[int, list[tuple[int, int, str]], np.ndarray]:
    """A random retrieval graph: n nodes, role-tagged links, non-negative b."""
    n = draw(st.integers(min_value=1, max_value=40))
    node = st.integers(min_value=0, max_value=n - 1)
    links = draw(
        st.lists(st.tuples(node, node, st.sampled_from(["about", "part", "x"])), max_size=120)
    )
    b = draw(
        st.lists(
            st.one_of(st.just(0.0), st.floats(min_value=0.0, max_value=10.0)),
            min_size=n,
            max_size=n,
        )
    )
    return n, links, np.asarray(b, dtype=np.float64)


def _fixed_point_error(result: ActivationResult, b: np.ndarray, t_matrix: Any) -> float:
    a = result.a
    norm = float(np.abs(a).sum())
    r = float(np.abs(a - b - t_matrix.T @ a).sum())
    return r / norm if norm > 0 else r


# --------------------------------------------------------------------------- ACT-1


@pytest.mark.req("ACT-1")
def test_fuse_match_with_both_signals_uses_default_weights() -> None:
    m, missing = fuse_match(0.5, 1.0)
    assert m == pytest.approx(0.8 * 0.5 + 0.2 * 1.0)
    assert missing == []


@pytest.mark.req("ACT-1")
def test_fuse_match_without_embedding_uses_lexical_alone_with_weight_one() -> None:
    m, missing = fuse_match(None, 0.7)
    assert m == pytest.approx(0.7)
    assert missing == ["semantic"]


@pytest.mark.req("ACT-1")
def test_fuse_match_without_fulltext_hit_uses_semantic_alone() -> None:
    m, missing = fuse_match(0.6, None)
    assert m == pytest.approx(0.6)
    assert missing == ["lexical"]


@pytest.mark.req("ACT-1")
def test_fuse_match_with_no_signal_is_zero_and_names_both() -> None:
    assert fuse_match(None, None) == (0.0, ["semantic", "lexical"])


@pytest.mark.req("ACT-1")
def test_fuse_match_renormalises_custom_weights() -> None:
    m, _ = fuse_match(0.4, 0.9, w_sem=3.0, w_lex=1.0)
    assert m == pytest.approx((3.0 * 0.4 + 1.0 * 0.9) / 4.0)


_SIGNAL = st.one_of(
    st.none(),
    st.sampled_from([0.0, -0.0, 0.5, 1.0, 1.0 + 5e-7, 1e-300]),
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
)


@pytest.mark.req("ACT-1")
@settings(max_examples=200, deadline=None)
@given(
    pairs=st.lists(st.tuples(_SIGNAL, _SIGNAL), max_size=40),
    w_sem=st.sampled_from([0.8, 0.0, 3.0]),
    w_lex=st.sampled_from([0.2, 0.0, 1.0]),
)
def test_fuse_matches_is_the_scalar_fusion_bit_for_bit(
    pairs: list[tuple[float | None, float | None]], w_sem: float, w_lex: float
) -> None:
    scores = [s for s, _ in pairs]
    lexical = [x for _, x in pairs]
    m, cosines, missing = fuse_matches(scores, lexical, w_sem, w_lex)
    for i, (score, lex) in enumerate(pairs):
        cosine = None if score is None else cosine_from_neo4j(score)
        want_m, want_missing = fuse_match(cosine, lex, w_sem, w_lex)
        assert float(m[i]).hex() == want_m.hex()
        assert missing[i] == want_missing
        if cosine is not None:
            assert float(cosines[i]).hex() == cosine.hex()


@pytest.mark.req("ACT-1")
def test_fuse_matches_refuses_what_the_scalar_fusion_refuses() -> None:
    for scores, lexical in (([math.nan], [0.5]), ([1.5], [None]), ([0.5], [-0.1])):
        with pytest.raises(InvalidInputError):
            fuse_matches(scores, lexical)
    with pytest.raises(InvalidInputError):
        fuse_matches([0.5], [0.5], w_sem=-1.0)


@pytest.mark.req("ACT-1")
def test_fuse_match_clips_negative_cosine_sum_to_zero() -> None:
    m, _ = fuse_match(-0.9, 0.1)
    assert m == 0.0


@pytest.mark.req("ACT-1")
@pytest.mark.parametrize(
    ("semantic", "lexical"),
    [(math.nan, 0.5), (0.5, math.inf), (1.5, 0.5), (0.5, -0.1), (0.5, 1.5)],
)
def test_fuse_match_rejects_out_of_range_signals(semantic: float, lexical: float) -> None:
    with pytest.raises(InvalidInputError):
        fuse_match(semantic, lexical)


@pytest.mark.req("ACT-1")
def test_fuse_match_rejects_negative_weight() -> None:
    with pytest.raises(InvalidInputError):
        fuse_match(0.5, 0.5, w_sem=-0.1)


@pytest.mark.req("ACT-1")
def test_cosine_from_neo4j_inverts_the_index_score() -> None:
    assert cosine_from_neo4j(1.0) == 1.0
    assert cosine_from_neo4j(0.5) == 0.0
    assert cosine_from_neo4j(0.0) == -1.0
    assert cosine_from_neo4j(0.75) == pytest.approx(0.5)
    with pytest.raises(InvalidInputError):
        cosine_from_neo4j(1.5)


@pytest.mark.req("ACT-1")
def test_normalise_lexical_divides_by_the_best_hit() -> None:
    assert normalise_lexical({"a": 4.0, "b": 2.0, "c": 0.0}) == {"a": 1.0, "b": 0.5, "c": 0.0}


@pytest.mark.req("ACT-1")
def test_normalise_lexical_handles_empty_and_all_zero() -> None:
    assert normalise_lexical({}) == {}
    assert normalise_lexical({"a": 0.0, "b": 0.0}) == {"a": 0.0, "b": 0.0}


@pytest.mark.req("ACT-1")
def test_normalise_lexical_rejects_negative_scores() -> None:
    with pytest.raises(InvalidInputError):
        normalise_lexical({"a": -1.0})


@pytest.mark.req("ACT-1")
@given(st.dictionaries(st.integers(), st.floats(min_value=0.0, max_value=1e30), max_size=30))
def test_normalise_lexical_lands_in_unit_interval_with_top_one(raw: dict[int, float]) -> None:
    out = normalise_lexical(raw)
    assert out.keys() == raw.keys()
    assert all(0.0 <= v <= 1.0 for v in out.values())
    if raw and max(raw.values()) > 0:
        assert max(out.values()) == 1.0


# --------------------------------------------------------------------------- ACT-2/5


@pytest.mark.req("ACT-2")
def test_usage_boost_matches_formula() -> None:
    m = np.array([0.5, 1.0, 0.0])
    u = np.array([0.0, 1.0, 5.0])
    expected = m * (1 + DEFAULT_BETA * u / (1 + u))
    np.testing.assert_allclose(usage_boost(m, u), expected)
    assert usage_boost(m, u)[2] == 0.0  # usage never creates a match


@pytest.mark.req("ACT-2")
def test_usage_boost_is_bounded_by_one_plus_beta() -> None:
    b = usage_boost(np.ones(3), np.array([1e6, 1e9, 1e12]), beta=0.3)
    assert np.all(b < 1.3 + 1e-12)


@pytest.mark.req("ACT-2")
def test_usage_boost_rejects_negative_usage() -> None:
    with pytest.raises(InvalidInputError):
        usage_boost(np.ones(2), np.array([0.0, -1.0]))


@pytest.mark.req("ACT-5")
@given(
    st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=30).flatmap(
        lambda m: st.tuples(
            st.just(m),
            st.lists(st.floats(min_value=0.0, max_value=1e6), min_size=len(m), max_size=len(m)),
        )
    )
)
def test_usage_never_changes_acquisition_order(pair: tuple[list[float], list[float]]) -> None:
    m, u = pair
    m_arr = np.asarray(m)
    order = acquisition_order(m_arr)
    # The order is a function of m alone; b (which carries u) is not an input.
    boosted = usage_boost(m_arr, np.asarray(u))
    assert np.array_equal(order, acquisition_order(m_arr))
    assert np.array_equal(order, np.argsort(-m_arr, kind="stable"))
    # Ordering by b instead would be the bug ACT-5 forbids; b must not be a parameter.
    assert list(inspect.signature(acquisition_order).parameters) == ["m"]
    assert boosted.shape == m_arr.shape


@pytest.mark.req("ACT-5")
def test_acquisition_order_is_by_match_descending_ties_by_index() -> None:
    assert acquisition_order(np.array([0.2, 0.9, 0.2, 0.5])).tolist() == [1, 3, 0, 2]


# --------------------------------------------------------------------------- ACT-3/7 edges


@pytest.mark.req("ACT-7")
def test_build_edges_default_gives_forward_and_reverse_weight_one() -> None:
    src, dst, w = build_edges(3, [(0, 1, "about"), (1, 2, "part")])
    assert sorted(zip(src.tolist(), dst.tolist(), w.tolist(), strict=True)) == [
        (0, 1, 1.0),
        (1, 0, 1.0),
        (1, 2, 1.0),
        (2, 1, 1.0),
    ]


@pytest.mark.req("ACT-3")
def test_build_edges_uses_role_table_and_drops_zero_weights() -> None:
    table = PropagationTable({"part": RoleWeights(forward=2.0, reverse=0.0)})
    src, dst, w = build_edges(3, [(0, 1, "part"), (1, 2, "other")], table)
    assert sorted(zip(src.tolist(), dst.tolist(), w.tolist(), strict=True)) == [
        (0, 1, 2.0),
        (1, 2, 1.0),
        (2, 1, 1.0),
    ]


@pytest.mark.req("ACT-3")
def test_propagation_table_is_immune_to_later_mutation_of_its_input() -> None:
    roles = {"part": RoleWeights(0.5, 0.5)}
    table = PropagationTable(roles)
    roles["part"] = RoleWeights(9.0, 9.0)
    assert table["part"] == RoleWeights(0.5, 0.5)
    assert table["unknown"] == RoleWeights(1.0, 1.0)


@pytest.mark.req("ACT-3")
def test_role_weights_reject_negative() -> None:
    with pytest.raises(InvalidInputError):
        RoleWeights(forward=-1.0)


@pytest.mark.req("ACT-3")
def test_build_edges_rejects_out_of_range_node() -> None:
    with pytest.raises(InvalidInputError):
        build_edges(2, [(0, 2, "x")])


@pytest.mark.req("ACT-3")
def test_node_without_out_edges_has_zero_row() -> None:
    # 0→1 forward only: node 1 is a sink.
    t = transition_matrix(3, [0, 0], [1, 2], [1.0, 3.0], propagation=0.5).toarray()
    assert np.all(t[1] == 0.0)
    assert np.all(t[2] == 0.0)
    np.testing.assert_allclose(t[0], [0.0, 0.125, 0.375])


@pytest.mark.req("ACT-3")
# Subnormal propagation factors underflow to 0 in any float arithmetic; not a setting.
@given(graphs(), st.floats(min_value=0.0, max_value=0.99, allow_subnormal=False))
def test_transition_rows_sum_to_propagation_or_zero(
    graph: tuple[int, list[tuple[int, int, str]], np.ndarray], p: float
) -> None:
    n, links, _ = graph
    src, dst, w = build_edges(n, links)
    t = transition_matrix(n, src, dst, w, propagation=p)
    sums = np.asarray(t.sum(axis=1)).ravel()
    has_out = np.bincount(src, minlength=n) > 0
    np.testing.assert_allclose(sums[has_out], p, rtol=1e-12)
    assert np.all(sums[~has_out] == 0.0)
    assert t.nnz == 0 or t.data.min() >= 0.0


@pytest.mark.req("ACT-3")
@pytest.mark.parametrize("p", [1.0, 1.5, -0.1, math.nan])
def test_invalid_propagation_raises(p: float) -> None:
    with pytest.raises(InvalidInputError):
        propagate(2, [0], [1], [1.0], np.array([1.0, 0.0]), propagation=p)
    with pytest.raises(InvalidInputError):
        transition_matrix(2, [0], [1], [1.0], propagation=p)


@pytest.mark.req("ACT-3")
def test_negative_base_activation_is_rejected() -> None:
    with pytest.raises(InvalidInputError):
        propagate(2, [0], [1], [1.0], np.array([1.0, -0.5]))


# --------------------------------------------------------------------------- ACT-7 worked check


@pytest.mark.req("ACT-7")
@pytest.mark.parametrize("reverse", [1.0, 0.0])
@pytest.mark.parametrize("direct_max_nodes", [0, 10])
def test_worked_check_one_link_gives_two_thirds_and_one_third(
    reverse: float, direct_max_nodes: int
) -> None:
    table = PropagationTable(default=RoleWeights(forward=1.0, reverse=reverse))
    src, dst, w = build_edges(2, [(0, 1, "any")], table)
    b = np.array([1.0, 0.0])  # only A matched
    r = propagate(2, src, dst, w, b, propagation=0.5, direct_max_nodes=direct_max_nodes)
    assert r.converged
    # Only B's score is fixed by the spec; with reverse weight 1 A also gains from B,
    # and the closed form a = (4/3, 2/3) still gives 2/3 and 1/3.
    np.testing.assert_allclose(r.scores, [2 / 3, 1 / 3], atol=1e-6)


@pytest.mark.req("ACT-7")
def test_chain_closed_form_for_any_propagation() -> None:
    # A→B forward only, b = (1, 0): a_B = p, so score_B = p / (1 + p).
    for p in (0.1, 0.5, 0.9):
        r = propagate(2, [0], [1], [1.0], np.array([1.0, 0.0]), propagation=p)
        assert r.scores[1] == pytest.approx(p / (1 + p), abs=1e-12)


@pytest.mark.req("ACT-7")
def test_defaults_are_those_of_the_reference_implementation() -> None:
    assert (DEFAULT_BETA, DEFAULT_PROPAGATION, DEFAULT_TOL) == (0.3, 0.5, 1e-6)


# --------------------------------------------------------------------------- ACT-3/4/6 solver


@pytest.mark.req("ACT-4")
@settings(max_examples=150, deadline=None)
@given(graphs(), st.floats(min_value=0.0, max_value=0.95), st.booleans())
def test_scores_sum_to_one_and_are_non_negative(
    graph: tuple[int, list[tuple[int, int, str]], np.ndarray], p: float, direct: bool
) -> None:
    n, links, b = graph
    src, dst, w = build_edges(n, links)
    r = propagate(
        n, src, dst, w, b, propagation=p, direct_max_nodes=n if direct else 0, max_work=BIG_WORK
    )
    assert not np.any(np.isnan(r.scores))
    assert np.all(r.scores >= 0.0)
    if b.sum() > 0:
        assert r.scores.sum() == pytest.approx(1.0, abs=1e-12)
    else:
        assert np.all(r.scores == 0.0)


@pytest.mark.req("ACT-3", "ACT-6")
@settings(max_examples=100, deadline=None)
@given(graphs(), st.floats(min_value=0.0, max_value=0.95), st.booleans())
def test_solution_satisfies_fixed_point_within_reported_residual(
    graph: tuple[int, list[tuple[int, int, str]], np.ndarray], p: float, direct: bool
) -> None:
    n, links, b = graph
    src, dst, w = build_edges(n, links)
    r = propagate(
        n, src, dst, w, b, propagation=p, direct_max_nodes=n if direct else 0, max_work=BIG_WORK
    )
    assert r.solver == ("spsolve" if direct else "fixed-point")
    assert r.converged
    assert r.residual <= DEFAULT_TOL
    t = transition_matrix(n, src, dst, w, propagation=p)
    assert _fixed_point_error(r, b, t) <= r.residual * (1 + 1e-9) + 1e-15


@pytest.mark.req("ACT-3", "ACT-6")
def test_a_graph_without_links_solves_to_its_base_activation_as_superlu_does() -> None:
    """No link: the direct solve is b itself, bit for bit what SuperLU gives for the
    identity, with the same diagnostics (the solve is skipped, not its report)."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 64):
        b = rng.random(n) * rng.choice([1e-6, 1.0, 1e6])
        b[rng.random(n) < 0.3] = 0.0
        r = propagate(n, [], [], [], b)
        superlu = spla.spsolve(sp.identity(n, dtype=np.float64, format="csc"), b)
        assert np.array_equal(r.a, np.asarray(superlu).reshape(n))
        assert r.a is not b and np.array_equal(r.scores, b / b.sum() if b.sum() else b * 0)
        assert (r.solver, r.iterations, r.residual, r.converged) == ("spsolve", 1, 0.0, True)
        assert (r.nodes, r.edges, r.work) == (n, 0, n)
    # Above the direct solver's bound the iteration reports as before.
    it = propagate(3, [], [], [], [1.0, 2.0, 0.0], direct_max_nodes=2)
    assert (it.solver, it.iterations, it.converged) == ("fixed-point", 0, True)


@pytest.mark.req("ACT-3")
def test_direct_and_iterative_agree() -> None:
    rng = np.random.default_rng(7)
    n = 300
    s, d = rng.integers(0, n, 1200), rng.integers(0, n, 1200)
    src, dst, w = np.concatenate((s, d)), np.concatenate((d, s)), np.ones(2400)
    b = np.zeros(n)
    b[rng.choice(n, 5, replace=False)] = rng.random(5)
    direct = propagate(n, src, dst, w, b, direct_max_nodes=n)
    it = propagate(n, src, dst, w, b, direct_max_nodes=0, tol=1e-12, max_work=BIG_WORK)
    assert (direct.solver, it.solver) == ("spsolve", "fixed-point")
    np.testing.assert_allclose(direct.scores, it.scores, atol=1e-10)


@pytest.mark.req("ACT-6")
def test_work_limit_stops_solver_and_reports_not_converged() -> None:
    n = 200
    rng = np.random.default_rng(3)
    s, d = rng.integers(0, n, 800), rng.integers(0, n, 800)
    src, dst, w = np.concatenate((s, d)), np.concatenate((d, s)), np.ones(1600)
    b = np.zeros(n)
    b[0] = 1.0
    limited = propagate(n, src, dst, w, b, max_work=3 * (1600 + n), direct_max_nodes=0)
    assert not limited.converged
    assert limited.iterations <= 3
    assert limited.work <= 3 * (1600 + n)
    assert limited.residual > DEFAULT_TOL
    # The reported residual is the true one of the returned iterate.
    t = transition_matrix(n, src, dst, w)
    assert _fixed_point_error(limited, b, t) == pytest.approx(limited.residual, rel=1e-9)
    assert limited.scores.sum() == pytest.approx(1.0)


@pytest.mark.req("ACT-6")
def test_work_limit_too_small_for_direct_falls_back_to_stopped_iteration() -> None:
    r = propagate(2, [0, 1], [1, 0], [1.0, 1.0], np.array([1.0, 0.0]), max_work=1)
    assert r.solver == "fixed-point"
    assert (r.iterations, r.converged) == (0, False)


@pytest.mark.req("ACT-6")
def test_diagnostics_report_solver_iterations_residual_and_size() -> None:
    src, dst, w = build_edges(3, [(0, 1, "x"), (1, 2, "x")])
    r = propagate(3, src, dst, w, np.array([1.0, 0.0, 0.0]), direct_max_nodes=0)
    diag = r.diagnostics()
    assert json.loads(json.dumps(diag)) == diag
    assert diag["solver"] == "fixed-point"
    assert diag["nodes"] == 3 and diag["edges"] == 4
    assert diag["converged"] is True
    assert diag["iterations"] > 0 and 0.0 <= diag["residual"] <= DEFAULT_TOL


@pytest.mark.req("ACT-4")
def test_all_zero_base_gives_all_zero_scores_without_nan() -> None:
    r = propagate(3, [0, 1], [1, 2], [1.0, 1.0], np.zeros(3))
    assert np.all(r.scores == 0.0)
    assert r.converged


@pytest.mark.req("ACT-4")
def test_empty_graph_is_empty_result() -> None:
    r = propagate(0, [], [], [], np.zeros(0))
    assert r.scores.size == 0 and r.converged and r.solver == "none"


@pytest.mark.req("ACT-4")
def test_isolated_matched_node_keeps_its_own_activation() -> None:
    r = propagate(3, [0], [1], [1.0], np.array([1.0, 0.0, 1.0]), propagation=0.5)
    np.testing.assert_allclose(r.a, [1.0, 0.5, 1.0], atol=1e-6)


@pytest.mark.req("ACT-3")
def test_propagate_is_deterministic() -> None:
    rng = np.random.default_rng(11)
    n = 500
    s, d = rng.integers(0, n, 2000), rng.integers(0, n, 2000)
    b = rng.random(n)
    r1 = propagate(n, s, d, np.ones(2000), b)
    r2 = propagate(n, s, d, np.ones(2000), b)
    assert np.array_equal(r1.scores, r2.scores)
    assert r1.diagnostics() == r2.diagnostics()


@pytest.mark.req("ACT-1")
def test_neo4j_cosines_is_half_shifted_cosine_and_none_without_direction() -> None:
    q = [1.0, 0.0]
    got = neo4j_cosines(q, [[2.0, 0.0], [-1.0, 0.0], [0.0, 5.0], [0.0, 0.0]])
    assert got[:3] == pytest.approx([1.0, 0.0, 0.5])
    assert got[3] is None
    assert neo4j_cosines([0.0, 0.0], [[1.0, 0.0]]) == [None]
    assert neo4j_cosines(q, []) == []


@pytest.mark.req("ACT-1")
def test_neo4j_cosines_gives_no_score_to_another_models_vector() -> None:
    # While `graphsvc reembed` runs, a head may hold a vector of another length: it
    # has no semantic signal (None: missing), the others keep theirs.
    got = neo4j_cosines([1.0, 0.0], [[1.0, 0.0, 0.0, 0.0], [0.0, 3.0], [], [1.0, 1.0]])
    assert got[0] is None and got[2] is None
    assert got[1] == pytest.approx(0.5) and got[3] == pytest.approx((1 + 2**-0.5) / 2)
