"""The acquisition's pure decisions: what the walk admits within its caps, which
fulltext hits come with embeddings, the fused match and the seeds (ACT-1, ACT-3, ACT-5,
ENT-4)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from graphsvc.core.acquisition import (
    LUCENE_MAX,
    Acquired,
    EntityHop,
    SimilarRow,
    Usage,
    Walk,
    admit_entities,
    admit_level,
    admit_similar,
    covered_by,
    fuse,
    keep_lexical,
    node_facts,
    take_lexical,
)
from graphsvc.core.bm25 import query_terms
from graphsvc.core.head_mirror import HeadMirror, MirrorHead
from graphsvc.settings import RankingSettings

Graph = dict[str, list[list[Any]]]


def _random_graph(atoms: int, seed: int) -> Graph:
    """Each atom's edge rows as search/expand_level returns them (both directions)."""
    rng = random.Random(seed)
    edges_of: Graph = {f"a{i}": [] for i in range(atoms)}
    for i in range(atoms):
        for _ in range(3):
            j = rng.randrange(atoms)
            src, dst, role = f"a{i}", f"a{j}", rng.choice(["related", "part-of"])
            edges_of[src].append([src, dst, role, dst, 1, 0, None])
            edges_of[dst].append([src, dst, role, src, 1, 0, None])
    return edges_of


def _plain_walk(
    edges_of: Graph, seeds: list[str], depth: int, max_nodes: int, max_edges: int
) -> tuple[list[str], list[tuple[str, str, str]], bool]:
    """The reference: one level at a time, edges in frontier order under the caps."""
    nodes = dict.fromkeys(seeds)
    frontier, seen, truncated = list(seeds), set(), False
    for _ in range(depth):
        nxt = []
        for atom_id in frontier:
            for src, dst, role, *_ in edges_of[atom_id]:
                if (src, dst, role) in seen:
                    continue
                if len(seen) >= max_edges:
                    truncated = True
                    break
                for end in (src, dst):
                    if end not in nodes:
                        if len(nodes) >= max_nodes:
                            truncated = True
                        else:
                            nodes[end] = None
                            nxt.append(end)
                if src in nodes and dst in nodes:
                    seen.add((src, dst, role))
        frontier = nxt
    return list(nodes), sorted(seen), truncated


@pytest.mark.req("ACT-3")
@pytest.mark.parametrize("caps", [(512, 4096), (30, 4096), (512, 40), (20, 25)])
@pytest.mark.parametrize("depth", [0, 1, 3])
def test_the_walk_admits_what_a_plain_walk_admits_within_the_caps(
    caps: tuple[int, int], depth: int
) -> None:
    edges_of = _random_graph(80, 5)
    seeds = ["a3", "a17", "a40"]
    walk = Walk.from_seeds(seeds)
    facts: dict[str, dict[str, Any]] = {}
    for _ in range(depth):
        # Only the frontier's rows are handed over, as a fetch would bring them.
        admit_level(walk, facts, {a: edges_of[a] for a in walk.frontier}, *caps)
    assert (list(walk.nodes), sorted(walk.edges), walk.truncated) == _plain_walk(
        edges_of, seeds, depth, *caps
    )
    assert set(walk.nodes) - set(seeds) <= set(facts)


def test_a_two_level_fetch_covers_the_usage_of_every_atom_its_rows_name() -> None:
    usage = Usage("default", "adaptiveUse")
    covered_by(usage, {"a": [["a", "b", "r", "b", 1, 0, None]]}, {"b": []})
    assert usage.covered == {"a", "b"}


def test_fulltext_hits_below_lucenes_embedded_edge_come_without_embeddings() -> None:
    acq, facts = Acquired(), {}
    hits = [
        ["c", 1, 1.0, 0, None, None, "c body"],
        ["a", 2, 3.0, 0, None, [0.1], "a body"],
        ["b", 1, 2.0, 0, None, [0.2], "b body"],
        ["d", 1, 2.0, 0, None, [0.3], "d body"],
    ]
    take_lexical(acq, facts, hits, limit=3, embedded=2)
    assert list(acq.lexical) == ["a", "b", "d"]  # score, then atomId; the pool's top 3
    assert acq.lexical_embeddings == {"a": [0.1], "b": [0.2], "d": [0.3]}  # ties at the edge
    assert facts["a"] == {"rev": 2, "atomisedInto": 0, "archivedAt": None}


@pytest.mark.req("ENT-4")
def test_entity_hops_admit_the_querys_entities_first_within_the_caps() -> None:
    acq = Acquired(edges=[("s1", "x", "related")])
    nodes = dict.fromkeys(["s1", "s2"])
    facts: dict[str, dict[str, Any]] = {}
    hop = EntityHop(
        seeds=[["s1", True, ["k:seed"]], ["s2", False, []]],
        entities=[
            ["k:seed", False, [["h1", 1, 0, None], ["h2", 1, 0, None]]],
            ["k:named", True, [["h3", 1, 0, None]]],
        ],
    )
    admit_entities(acq, facts, nodes, hop, max_nodes=4, max_edges=3)
    assert acq.query_entities == ["k:named"]
    assert acq.unindexed == 1
    assert acq.entity_edges == [("k:named", "h3"), ("k:seed", "h1")]  # room: 3 - 1 edges
    assert acq.truncated
    assert list(nodes) == ["s1", "s2", "h3", "h1"]


def test_similar_heads_keep_their_edge_to_an_admitted_head_past_the_node_cap() -> None:
    acq = Acquired()
    nodes = dict.fromkeys(["s1"])
    rows = [SimilarRow("s1", [["h1", 1, 0, None], ["s1", 1, 0, None], ["h2", 1, 0, None]])]
    admit_similar(acq, {}, nodes, rows, max_nodes=2)
    assert list(nodes) == ["s1", "h1"]
    assert acq.similar_edges == [("s1", "h1"), ("s1", "s1")]
    assert acq.truncated


def test_node_facts_carry_the_usage_state_of_the_heads_revision() -> None:
    usage = Usage("default", "adaptiveUse", states={("a", 2): "{}", ("b", 1): "{}"})
    facts = {"a": {"rev": 2, "atomisedInto": 0, "archivedAt": None}}
    out = node_facts(["a", "b"], facts, usage)
    assert out == {
        "a": {"atomId": "a", "rev": 2, "atomisedInto": 0, "archivedAt": None, "usage": "{}"}
    }


@pytest.mark.req("ACT-5")
def test_the_seeds_are_the_best_fused_matches_and_lucenes_order_keeps_the_pool() -> None:
    acq = Acquired(
        semantic={"a": 0.9, "b": 0.6},
        lexical={"c": 4.0, "a": 2.0, "d": 1.0},
        lexical_semantic={"c": 0.7},
    )
    ranking = RankingSettings(max_seeds=2, lexical_proximity=0)
    assert keep_lexical(acq, "query", ranking) == ["c", "a"]  # no subject statistics
    fusion = fuse(acq, "query", ranking)
    assert fusion.normalisation == LUCENE_MAX
    assert set(fusion.fused) == {"a", "b", "c", "d"}
    assert fusion.fused["d"][1] is None and fusion.fused["d"][3]  # no embedding: missing
    ranked = sorted(fusion.fused, key=lambda a: (-fusion.fused[a][0], a))
    assert fusion.seeds == ranked[:2]


@pytest.mark.req("ACT-1")
def test_while_the_fulltext_index_is_rebuilt_the_lexical_signal_is_missing() -> None:
    acq = Acquired(semantic={"a": 0.9}, lexical_mode="rebuilding")
    fusion = fuse(acq, "query", RankingSettings(max_seeds=4, lexical_proximity=0))
    assert fusion.fused["a"][2] is None
    assert fusion.seeds == ["a"]


@pytest.mark.req("ACT-1")
def test_the_mirrors_body_scores_fuse_as_the_bodies_scored_here_bit_for_bit() -> None:
    """A mirror search hands the fusion every candidate's BM25 from the mirror's own
    scoring (Acquired.body_scores): the fused matches, the seeds and the
    normalisation are exactly those of scoring the bodies again (score_bodies)."""
    rng = random.Random(23)
    words = ["harbour", "boats", "fog", "keeper", "rowing", "storm", "the", "of"]
    for trial in range(40):
        heads = [
            MirrorHead(
                f"x{i:02d}",
                1,
                " ".join(rng.choice(words) for _ in range(rng.randint(1, 9))),
                None,
                None,
                None,
            )
            for i in range(rng.randint(2, 30))
        ]
        mirror = HeadMirror(heads)
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 4)))
        terms = query_terms(text, 3)
        if not terms.terms:
            continue
        scored = mirror.bm25(terms, slop=3)
        rows = mirror.lexical(terms, slop=3, limit=8, include_archived=False, scored=scored)
        semantic = {h.atom_id: rng.random() for h in rng.sample(heads, min(5, len(heads)))}
        for scope in ("hits", "candidates"):
            for normalisation in ("max", "bound"):
                ranking = RankingSettings(
                    max_seeds=8,
                    lexical_proximity=3,
                    lexical_scope=scope,
                    lexical_normalisation=normalisation,
                )
                fused = []
                for known in (None, scored):
                    acq = Acquired(semantic=dict(semantic), subject_stats=scored.stats)
                    take_lexical(acq, {}, rows, 8, 8)
                    for h in heads:
                        if h.atom_id in semantic:
                            acq.texts.setdefault(h.atom_id, h.text)
                    if known is not None:
                        acq.body_scores = mirror.scores_of(known, acq.texts)
                        acq.lexical_bound = known.bound
                    fused.append(fuse(acq, text, ranking))
                assert fused[0] == fused[1], trial
