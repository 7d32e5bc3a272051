"""The retrieval-graph walk: two levels per query and split frontiers change nothing.

``ops.acquisition.walk`` fetches two BFS levels per round trip and splits big
frontiers into halves that run side by side (``store.retrieval``). Its result must be
exactly that of the plain walk — one ``search/expand_level`` query per level over the whole
frontier, edges examined in frontier order under the node and edge caps (ACT-3:
the retrieval graph is the permitted, current links).
"""

from __future__ import annotations

import random
import uuid
from typing import Any

import pytest
from neo4j import ManagedTransaction
from write_support import new, ref, revise, write

from graphsvc.core.acquisition import Usage
from graphsvc.core.binding import Binding
from graphsvc.ops.acquisition import walk
from graphsvc.service import Service
from graphsvc.store.connection import run
from graphsvc.store.retrieval import SPLIT_LEVEL_AT

ATOMS = 130


def _plain_walk(
    tx: ManagedTransaction,
    subject: str,
    seeds: list[str],
    depth: int,
    max_nodes: int,
    max_edges: int,
) -> tuple[list[str], list[tuple[str, str, str]], bool]:
    """The reference: one query per level over the whole frontier."""
    nodes: dict[str, None] = dict.fromkeys(seeds)
    frontier = list(seeds)
    seen: set[tuple[str, str, str]] = set()
    truncated = False
    for _ in range(depth):
        if not frontier:
            break
        nxt: list[str] = []
        for row in run(tx, "search/expand_level", subject=subject, frontier=frontier):
            for src, dst, role, *_facts in row["edges"]:
                edge = (src, dst, role)
                if edge in seen:
                    continue
                if len(seen) >= max_edges:
                    truncated = True
                    break
                for end in (src, dst):
                    if end not in nodes:
                        if len(nodes) >= max_nodes:
                            truncated = True
                            break
                        nodes[end] = None
                        nxt.append(end)
                if src in nodes and dst in nodes:
                    seen.add(edge)
        frontier = nxt
    return list(nodes), sorted(seen), truncated


@pytest.fixture(scope="module")
def graph(service: Service) -> tuple[Binding, list[str]]:
    """130 atoms, 3 random links each (logical and observed, cycles included); a
    few atoms revised so observed links to their old revisions are history."""
    binding = Binding(f"t-expansion-{uuid.uuid4().hex[:8]}", "default", "human", "expansion-test")
    rng = random.Random(11)
    changes = []
    for i in range(ATOMS):
        links = [
            {
                "role": rng.choice(["related", "part-of", "see-also"]),
                "target": {
                    "local": f"a{rng.randrange(ATOMS)}",
                    "at": rng.choice(["logical", "observed"]),
                },
            }
            for _ in range(3)
        ]
        changes.append(new(f"a{i}", f"atom {i} about harbours and glaciers", links))
    out = write(service, binding, changes).changes
    ids = [out[f"a{i}"].atom_id for i in range(ATOMS)]
    revised = [revise(f"r{i}", ref(out[f"a{i}"]), f"atom {i}, revised") for i in range(0, ATOMS, 9)]
    write(service, binding, revised)
    return binding, ids


@pytest.mark.req("ACT-3")
@pytest.mark.parametrize("depth", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("seeds", [1, 7, SPLIT_LEVEL_AT + 5])
@pytest.mark.parametrize("caps", [(512, 4096), (40, 4096), (512, 60), (25, 30)])
def test_two_levels_per_query_and_split_frontiers_equal_the_plain_walk(
    service: Service,
    graph: tuple[Binding, list[str]],
    depth: int,
    seeds: int,
    caps: tuple[int, int],
) -> None:
    binding, ids = graph
    seed_ids = random.Random(depth * 100 + seeds).sample(ids, seeds)
    max_nodes, max_edges = caps

    usage = Usage(binding.policy, "adaptiveUse")

    def both(tx: ManagedTransaction) -> tuple[Any, Any]:
        facts: dict[str, dict[str, Any]] = {}
        usage.covered.clear()
        graph = walk(
            tx,
            service.db,
            binding.subject,
            seed_ids,
            depth,
            max_nodes,
            max_edges,
            usage,
            facts,
        )
        plain = _plain_walk(tx, binding.subject, seed_ids, depth, max_nodes, max_edges)
        return (list(graph.nodes), sorted(graph.edges), graph.truncated, graph.levels, facts), plain

    (nodes, edges, truncated, levels, facts), (want_nodes, want_edges, want_trunc) = (
        service.db.read_tx(both)
    )
    assert nodes == want_nodes  # same nodes, admitted in the same order
    assert edges == want_edges
    assert truncated == want_trunc
    assert levels <= depth
    assert set(nodes) <= set(facts) | set(seed_ids)
    if depth == 2:  # one two-level fetch: it asked for the usage of every admitted atom
        assert set(nodes) <= usage.covered
    if depth >= 2 and caps == (512, 4096) and seeds > 1:
        assert len(nodes) > seeds  # the walk really went somewhere
