"""The limits the read-side use cases take instead of the whole Settings."""

from __future__ import annotations

from pathlib import Path

from graphsvc.ops.cursors import CursorLimits, digest, ranking_hash
from graphsvc.ops.inspect import InspectLimits
from graphsvc.ops.read import ReadLimits
from graphsvc.ops.search import SearchLimits
from graphsvc.settings import Settings


def _settings(tmp_path: Path) -> Settings:
    return Settings.from_env(state_dir=tmp_path)


def test_limits_carry_the_settings_values(tmp_path: Path) -> None:
    st = _settings(tmp_path).with_(max_nodes=321, read_limit=7, beta=0.25, inspect_limit=9)
    read = ReadLimits.from_settings(st)
    assert (read.ranking.max_nodes, read.read_limit, read.ranking.beta) == (321, 7, 0.25)
    assert read.ranking is st.ranking  # the section itself: each knob declared once
    assert SearchLimits.from_settings(st).ranking.max_nodes == 321
    assert InspectLimits.from_settings(st).inspect_limit == 9
    assert read.cursors == CursorLimits(st.lifetimes.cursor_lifetime_s, ranking_hash(st))


def test_ranking_hash_binds_the_ranking_settings_only(tmp_path: Path) -> None:
    st = _settings(tmp_path)
    fields = (
        "beta", "propagation", "convergence_tol", "role_weights", "max_seeds", "max_nodes",
        "max_edges", "evaluation_work", "packing_work", "candidate_oversample",
        "link_weighting", "entities", "entity_weight", "entity_max_degree",
        "entity_query_weight", "entity_anchors", "entity_anchor_weight", "similar_heads",
        "similar_weight",
    )  # fmt: skip
    assert ranking_hash(st) == digest({f: getattr(st.ranking, f) for f in fields})
    assert ranking_hash(st.with_(beta=st.ranking.beta / 2)) != ranking_hash(st)
    assert ranking_hash(st.with_(entity_weight=0.0)) != ranking_hash(st)
    assert ranking_hash(st.with_(entity_anchor_weight=0.5)) != ranking_hash(st)
    assert ranking_hash(st.with_(read_limit=st.read.read_limit + 1)) == ranking_hash(st)


def test_limits_are_built_once_per_settings(tmp_path: Path) -> None:
    st = _settings(tmp_path)
    assert ReadLimits.from_settings(st) is ReadLimits.from_settings(st)
    other = st.with_(max_limit=st.read.max_limit + 1)
    assert ReadLimits.from_settings(other).max_limit == st.read.max_limit + 1
