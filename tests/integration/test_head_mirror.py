"""A search answers its candidate legs from the process's mirror of the subject's heads
(graphsvc.process_state.head_mirrors), and the mirror follows every change: a write in another
process, a revision, a retirement, a purge, an embedding set on an existing head.
The ranking is the one the fulltext and vector queries give (ACT-1), and a subject
above the bound is asked of the indexes as before."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from write_support import (
    cypher,
    new,
    own_database,
    ref,
    retire,
    revise,
    write,
)

from graphsvc.core.binding import Binding
from graphsvc.core.requests import SearchRequest
from graphsvc.core.write_models import AtomRef
from graphsvc.process_state.head_mirrors import mirror_shelf
from graphsvc.runtime import service_for
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.store.atomise import embed_head
from graphsvc.store.connection import Database

TEXTS = [
    "The lighthouse keeper painted the rowing boat blue",
    "A rowing club meets at the harbour every Sunday morning",
    "The keeper's logbook records storms and fog over the harbour",
    "Fresh bread from the bakery near the harbour",
    "Quarterly figures were presented to the board",
    "The ferry to the island leaves the harbour at noon",
]
QUERY = "rowing boat at the harbour"


def _reads(query: str) -> float:
    from graphsvc.telemetry.metrics import REGISTRY

    value = REGISTRY.get_sample_value(
        "graphsvc_neo4j_query_duration_seconds_count", {"query": query}
    )
    return value or 0.0


def _binding() -> Binding:
    return Binding(f"t-mirror-{uuid.uuid4().hex[:10]}", "default", "human", "alice", may_purge=True)


def _seed(service: Service, binding: Binding, texts: list[str] = TEXTS) -> list[str]:
    outcome = write(service, binding, [new(f"c{i}", t) for i, t in enumerate(texts)])
    return [outcome.changes[f"c{i}"].atom_id for i in range(len(texts))]


def _ranking(service: Service, binding: Binding, query: str = QUERY) -> list[tuple[str, float]]:
    result = service.search(binding, SearchRequest(query, limit=20))
    return [(h.atom.atom_id, h.score) for h in result.hits]


def _lexical(service: Service, binding: Binding, query: str) -> dict[str, float]:
    """Each hit's lexical signal (hits without one: 0)."""
    result = service.search(binding, SearchRequest(query, limit=20))
    return {h.atom.atom_id: h.breakdown["lexical"] or 0.0 for h in result.hits}


def _modes(service: Service, binding: Binding, query: str = QUERY) -> tuple[str, str]:
    acquisition = service.search(binding, SearchRequest(query, limit=5)).diagnostics["acquisition"]
    return acquisition["lexicalMode"], acquisition["vectorMode"]


@pytest.fixture(scope="module")
def indexes_only(service: Service, test_settings: Settings) -> Service:
    return service_for(
        test_settings.with_(head_mirror_max=0), service.db, service.embedder, service.tokenizer
    )


@pytest.mark.req("ACT-1", "ACT-4")
def test_the_mirror_ranks_as_the_fulltext_and_vector_queries_do(
    service: Service, indexes_only: Service
) -> None:
    binding = _binding()
    _seed(service, binding)
    assert service.settings.ranking.head_mirror_max > 0
    assert _modes(service, binding) == ("mirror", "exact")
    assert _modes(indexes_only, binding)[0] != "mirror"
    mirrored, asked = _ranking(service, binding), _ranking(indexes_only, binding)
    assert [a for a, _ in mirrored] == [a for a, _ in asked]
    assert [s for _, s in mirrored] == pytest.approx([s for _, s in asked], abs=1e-6)
    # A repeated search reads neither leg from Neo4j nor the heads again.
    before = {q: _reads(q) for q in ("search/mirror_heads", "search/fulltext_candidates",
                                     "search/vector_candidates_small")}  # fmt: skip
    _ranking(service, binding)
    assert {q: _reads(q) for q in before} == before


@pytest.mark.req("ACT-1")
def test_writes_elsewhere_revisions_and_retirements_reach_the_next_search(
    service: Service, test_settings: Settings
) -> None:
    binding = _binding()
    ids = _seed(service, binding)
    _ranking(service, binding)  # the mirror is read
    # Another process: its own Database (its own mirrors) on the same Neo4j.
    other_db = own_database(test_settings)
    try:
        other = service_for(test_settings, other_db, service.embedder, service.tokenizer)
        _ranking(other, binding)
        heads = _reads("search/mirror_heads")
        changes = _reads("search/mirror_changes")
        added = write(other, binding, [new("n", "A zanzibar rowing regatta on the harbour")])
        fresh = added.changes["n"].atom_id
        assert _lexical(service, binding, "zanzibar regatta")[fresh] == 1.0
        write(
            other,
            binding,
            [revise("r", ref(ids[0], 1), "The keeper painted a canoe green"),
             retire("x", ref(ids[1], 1))],
        )  # fmt: skip
        rowing = _lexical(service, binding, "rowing")
        assert rowing.get(ids[0], 0.0) == 0.0  # its new text lacks the word
        assert ids[1] not in rowing  # retired
        assert _lexical(service, binding, "canoe")[ids[0]] == 1.0
        # Followed by the change feed, not read again.
        assert _reads("search/mirror_heads") == heads
        assert _reads("search/mirror_changes") >= changes + 2
        assert _lexical(other, binding, "zanzibar regatta")[fresh] == 1.0
    finally:
        other_db.close()


@pytest.mark.req("ACT-1", "LNK-6")
def test_a_purge_leaves_no_purged_text_in_the_mirror(service: Service) -> None:
    binding = _binding()
    ids = _seed(service, binding, [*TEXTS, "The quokka smuggler's ledger"])
    assert _lexical(service, binding, "quokka smuggler")[ids[-1]] == 1.0
    heads = _reads("search/mirror_heads")
    outcome = service.purge(binding, ids[-1])
    assert outcome.purged == [ids[-1]]
    assert ids[-1] not in _lexical(service, binding, "quokka smuggler")
    assert _reads("search/mirror_heads") == heads + 1  # the purge epoch moved: read again
    shelf = mirror_shelf(service.db, 1)
    assert shelf.held()[binding.subject] == len(TEXTS)


@pytest.mark.req("ACT-1")
def test_an_embedding_set_on_an_existing_head_reaches_the_mirror(
    service: Service, db: Database
) -> None:
    binding = _binding()
    ids = _seed(service, binding)
    # A head whose embedding was deferred (atomise's synchronous mode) has none yet.
    cypher(
        db,
        "MATCH (r:Revision:Current {subject: $s, atomId: $a}) REMOVE r.embedding",
        s=binding.subject,
        a=ids[4],
    )
    query = "quarterly figures presented to the board"
    before = service.search(binding, SearchRequest(query, limit=20))
    hit = next(h for h in before.hits if h.atom.atom_id == ids[4])
    assert hit.breakdown["semantic"] is None
    vector = service.embedder.embed([TEXTS[4]])[0]
    embed_head(db, binding.subject, AtomRef(ids[4], 1), vector)
    after = service.search(binding, SearchRequest(query, limit=20))
    hit = next(h for h in after.hits if h.atom.atom_id == ids[4])
    assert hit.breakdown["semantic"] is not None and hit.breakdown["semantic"] > 0.5


@pytest.mark.req("ACT-1")
def test_a_subject_above_the_bound_asks_the_indexes(
    service: Service, test_settings: Settings
) -> None:
    binding = _binding()
    _seed(service, binding)
    small = service_for(
        test_settings.with_(head_mirror_max=len(TEXTS) - 1),
        service.db,
        service.embedder,
        service.tokenizer,
    )
    lexical, vector = _modes(small, binding)
    assert lexical != "mirror" and vector == "exact"
    assert [a for a, _ in _ranking(small, binding)] == [a for a, _ in _ranking(service, binding)]


@pytest.mark.req("ACT-3", "ENT-4")
def test_on_the_team_corpus_the_mirror_ranks_as_the_store_with_links_and_entities(
    service: Service, indexes_only: Service
) -> None:
    """Links, entities and both candidate legs: every question of the team benchmark
    ranks the same from the mirror as from the store's queries."""
    import json
    from pathlib import Path

    from graphsvc.seed import load_team_corpus

    binding = _binding()
    load_team_corpus(service, subject=binding.subject)
    questions = json.loads(
        (Path(__file__).parents[2] / "bench" / "data" / "team_questions.json").read_text()
    )["questions"]
    compared = 0
    for q in questions[:12]:
        mirrored = service.search(binding, SearchRequest(q["question"], limit=10))
        asked = indexes_only.search(binding, SearchRequest(q["question"], limit=10))
        assert mirrored.diagnostics["acquisition"]["lexicalMode"] == "mirror"
        assert [h.atom for h in mirrored.hits] == [h.atom for h in asked.hits]  # views too
        assert [h.score for h in mirrored.hits] == pytest.approx(
            [h.score for h in asked.hits], abs=1e-6
        )
        graph = mirrored.diagnostics["evaluation"]
        assert graph["entities"]["share"] == pytest.approx(
            asked.diagnostics["evaluation"]["entities"]["share"], abs=1e-6
        )
        compared += 1
    assert compared == 12


def _usage(service: Service, binding: Binding, atom_id: str) -> float:
    result = service.search(binding, SearchRequest(QUERY, limit=20))
    return next(h.breakdown["usage"] for h in result.hits if h.atom.atom_id == atom_id)


@pytest.mark.req("AV-3")
def test_usage_states_are_kept_until_a_use_recorded_anywhere_or_a_reset_moves_them(
    service: Service, test_settings: Settings
) -> None:
    binding = _binding()
    ids = _seed(service, binding)
    assert _usage(service, binding, ids[0]) == 0.0  # the states are read and kept
    kept, per_search = _reads("search/usage_states_all"), _reads("search/usage_states")
    assert _usage(service, binding, ids[0]) == 0.0
    assert (_reads("search/usage_states_all"), _reads("search/usage_states")) == (
        kept,
        per_search,
    )  # a repeated search reads no usage state
    other_db = own_database(test_settings)  # another process, on the same Neo4j
    try:
        other = service_for(test_settings, other_db, service.embedder, service.tokenizer)
        other.record_use(binding, f"ev-{uuid.uuid4().hex}", {}, [AtomRef(ids[0], 1)])
        assert _usage(service, binding, ids[0]) > 0.0
        assert _reads("search/usage_states_all") == kept + 1
        # Another policy of the same subject keeps its own (empty) states.
        elsewhere = Binding(binding.subject, "other-policy", "human", "alice")
        assert _usage(service, elsewhere, ids[0]) == 0.0
        assert other.reset_usage(binding) == 1
        assert _usage(service, binding, ids[0]) == 0.0
    finally:
        other_db.close()


@pytest.mark.req("API-6", "ACT-1")
def test_hits_are_shown_from_the_mirror_as_the_store_shows_them(
    service: Service, indexes_only: Service
) -> None:
    """Sources, a revised head, an observed link pinned to its old revision, a required
    logical link and one to a retired atom (whose head the mirror does not hold: that
    hit is read from the store): every hit's view is the store's."""
    from graph_support import small_graph

    binding = _binding()
    small = small_graph(service, binding)
    query = "alpha beta handbook revised"
    mirrored = service.search(binding, SearchRequest(query, limit=10))
    asked = indexes_only.search(binding, SearchRequest(query, limit=10))
    assert mirrored.diagnostics["acquisition"]["lexicalMode"] == "mirror"
    assert {h.atom.atom_id for h in mirrored.hits} >= {small.a2.atom_id, small.b.atom_id}
    assert [h.atom for h in mirrored.hits] == [h.atom for h in asked.hits]
    b_view = next(h.atom for h in mirrored.hits if h.atom.atom_id == small.b.atom_id)
    assert [link.target for link in b_view.links][:2] == [small.a.ref, small.a2.ref]
    assert len(b_view.sources) == 2

    # Where every hit's head is held, a search reads no view at all.
    plain = _binding()
    _seed(service, plain)
    _ranking(service, plain)
    views = _reads("view/atom_views")
    assert len(_ranking(service, plain)) == len(TEXTS)
    assert _reads("view/atom_views") == views


@pytest.mark.req("ACT-1")
def test_a_search_whose_state_is_older_than_the_mirror_uses_the_mirror_as_it_is(
    service: Service,
) -> None:
    """Concurrent searches read the subject's state before they take the mirror: one
    that read it before another moved the mirror on keeps the newer mirror rather than
    reading every head again."""
    binding = _binding()
    _seed(service, binding)
    _ranking(service, binding)
    older = cypher(service.db, "MATCH (c:ChangeSequence {subject: $s}) RETURN c.last AS last",
                   s=binding.subject)[0]["last"]  # fmt: skip
    fresh = write(service, binding, [new("n", "A zanzibar regatta")]).changes["n"].atom_id
    _ranking(service, binding)  # the mirror follows the write
    heads, changes = _reads("search/mirror_heads"), _reads("search/mirror_changes")
    bound = service.settings.ranking.head_mirror_max
    shelf = mirror_shelf(service.db, 4 * bound)

    def stale_search(tx: Any) -> bool:
        state = dict(service.db.read("search/mirror_state", subject=binding.subject)[0])
        state["changeSeq"] = older  # as read before the write committed
        with shelf.current(tx, binding.subject, state, bound) as mirror:
            return mirror is not None and fresh in mirror

    assert service.db.read_tx(stale_search, label="test") is True
    assert (_reads("search/mirror_heads"), _reads("search/mirror_changes")) == (heads, changes)
