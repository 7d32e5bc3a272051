"""The in-process mirror of a subject's heads answers both candidate legs as the
queries do: the subject's own BM25 over every body holding a query term, and Neo4j's
cosine over every embedding (graphsvc.core.head_mirror)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from graphsvc.core.activation import neo4j_cosines
from graphsvc.core.bm25 import SubjectStats, analyse, body_length, query_terms, score_bodies
from graphsvc.core.head_mirror import HeadMirror, HeadView, MirrorHead, packed_embedding
from graphsvc.core.write_models import AtomRef

TEXTS = {
    "a": "The lighthouse keeper painted the rowing boat blue",
    "b": "A rowing club meets at the harbour every Sunday morning",
    "c": "The keeper's logbook records storms and fog",
    "d": "Quarterly figures were presented to the board",
}
VECTORS = {
    "a": (1.0, 0.0, 0.0),
    "b": (0.6, 0.8, 0.0),
    "c": (0.0, 0.0, 2.0),
    "d": (-1.0, 0.0, 0.0),
}


def _head(atom_id: str, text: str | None = None, **kw: object) -> MirrorHead:
    return MirrorHead(
        atom_id=atom_id,
        rev=int(kw.get("rev", 1)),  # type: ignore[call-overload]
        text=TEXTS[atom_id] if text is None else text,
        atomised_into=kw.get("into"),  # type: ignore[arg-type]
        archived_at=kw.get("archived"),  # type: ignore[arg-type]
        embedding=_packed(kw.get("vector", VECTORS.get(atom_id))),
    )


def _packed(vector: object) -> bytes | None:
    return None if vector is None else packed_embedding(vector)  # type: ignore[arg-type]


def _mirror() -> HeadMirror:
    return HeadMirror(_head(a) for a in TEXTS)


@pytest.mark.req("ACT-1")
def test_the_lexical_leg_is_the_subjects_own_bm25_best_first() -> None:
    mirror = _mirror()
    terms = query_terms("rowing keeper", 3)
    rows = mirror.lexical(terms, slop=3, limit=10, include_archived=False)
    words = sum(body_length(t) for t in TEXTS.values())
    stats = SubjectStats(4, words / 4, {"row": 2, "keeper": 2})
    assert mirror.stats(terms) == stats
    expected, _ = score_bodies(terms, [TEXTS[a] for a in "abc"], stats, slop=3)
    want = sorted(zip("abc", expected, strict=True), key=lambda p: (-p[1], p[0]))
    assert [(r[0], r[2]) for r in rows] == [(a, pytest.approx(s)) for a, s in want]
    assert rows[0][0] == "a"  # both words, and near each other
    assert all(r[5] is None and r[6] == TEXTS[r[0]] for r in rows)
    assert mirror.lexical(terms, slop=3, limit=1, include_archived=False)[0][0] == "a"


@pytest.mark.req("ACT-1")
def test_the_vector_leg_is_neo4js_cosine_over_every_head() -> None:
    mirror = _mirror()
    query = [0.8, 0.6, 0.0]
    rows = mirror.semantic(query, limit=10, include_archived=False)
    want = neo4j_cosines(query, [VECTORS[a] for a in "abcd"])
    got = {r["atomId"]: r["semantic"] for r in rows}
    assert got == {a: pytest.approx(s) for a, s in zip("abcd", want, strict=True)}
    assert [r["atomId"] for r in rows] == ["b", "a", "c", "d"]
    assert mirror.cosines(query, ["a", "c", "zz"]) == {
        "a": pytest.approx(want[0]),
        "c": pytest.approx(want[2]),
    }
    # Another length (another model's embedding): no similarity, as in Neo4j.
    assert mirror.semantic([1.0, 0.0], limit=10, include_archived=False) == []


@pytest.mark.req("ACT-1")
def test_changes_replace_heads_and_their_terms_and_vectors() -> None:
    mirror = _mirror()
    mirror.apply(
        {
            "a": _head("a", "A tugboat in the fog", rev=2, vector=(0.0, 1.0, 0.0)),
            "b": None,
            "e": _head("e", "Rowing at dawn", vector=(0.0, 1.0, 0.0)),
        }
    )
    assert len(mirror) == 4 and "b" not in mirror
    terms = query_terms("rowing fog", 0)
    rows = mirror.lexical(terms, slop=0, limit=10, include_archived=False)
    assert {r[0] for r in rows} == {"a", "c", "e"}
    assert next(r for r in rows if r[0] == "a")[1] == 2
    assert mirror.stats(terms).df == {"row": 1, "fog": 2}
    semantic = mirror.semantic([0.0, 1.0, 0.0], limit=2, include_archived=False)
    assert [r["atomId"] for r in semantic] == ["a", "e"]
    # Rows freed by removals are reused: many changes keep the mirror consistent.
    for i in range(40):
        mirror.apply({f"x{i}": _head(f"x{i}", f"filler {i}", vector=(1.0, 1.0, 1.0))})
    for i in range(0, 40, 2):
        mirror.apply({f"x{i}": None})
    near = mirror.semantic([1.0, 1.0, 1.0], limit=100, include_archived=False)
    assert len(near) == 4 + 20


@pytest.mark.req("ACT-1")
def test_archived_parents_are_hidden_unless_asked_for_yet_counted() -> None:
    mirror = _mirror()
    mirror.apply({"a": _head("a", rev=2, into=3, archived="2026-12-03T00:00:00Z")})
    terms = query_terms("rowing", 0)
    hidden = mirror.lexical(terms, slop=0, limit=10, include_archived=False)
    shown = mirror.lexical(terms, slop=0, limit=10, include_archived=True)
    assert [r[0] for r in hidden] == ["b"] and {r[0] for r in shown} == {"a", "b"}
    assert mirror.stats(terms).df == {"row": 2}  # the index counts every head
    assert "a" not in {
        r["atomId"] for r in mirror.semantic([1.0, 0.0, 0.0], limit=10, include_archived=False)
    }
    assert "a" in {
        r["atomId"] for r in mirror.semantic([1.0, 0.0, 0.0], limit=10, include_archived=True)
    }


@pytest.mark.req("ACT-1")
def test_a_head_without_an_embedding_has_text_but_no_vector() -> None:
    mirror = HeadMirror([_head("a", vector=None), _head("b")])
    assert [
        r["atomId"] for r in mirror.semantic([1.0, 0.0, 0.0], limit=5, include_archived=False)
    ] == ["b"]
    assert mirror.cosines([1.0, 0.0, 0.0], ["a"]) == {}
    assert [
        r[0]
        for r in mirror.lexical(query_terms("boat", 0), slop=0, limit=5, include_archived=False)
    ] == ["a"]


def _linked(atom_id: str, rev: int, *links: tuple[str, str, int | None, bool]) -> MirrorHead:
    return MirrorHead(atom_id, rev, f"body of {atom_id}", None, None, None, tuple(links))


@pytest.mark.req("ACT-3")
def test_edges_bind_logical_links_to_heads_and_observed_ones_to_their_revision() -> None:
    mirror = HeadMirror(
        [
            _linked("a", 1, ("follows", "b", None, False), ("cites", "c", 1, False)),
            _linked("b", 2),
            _linked("c", 1, ("owner", "a", None, False), ("gone", "b", None, True)),
        ]
    )
    assert mirror.edges("a") == [
        ["a", "b", "follows", "b", 2, None, None],
        ["a", "c", "cites", "c", 1, None, None],
        ["c", "a", "owner", "c", 1, None, None],
    ]
    # b: a's logical link in; c's unavailable (purged) link is no edge.
    assert mirror.edges("b") == [["a", "b", "follows", "a", 1, None, None]]
    # c revised: a's observed link pinned rev 1 is history, not graph.
    mirror.apply({"c": _linked("c", 2)})
    assert mirror.edges("a") == [["a", "b", "follows", "b", 2, None, None]]
    assert mirror.edges("c") == []
    # a gone: its links leave with it, in both directions.
    mirror.apply({"a": None})
    assert mirror.edges("b") == [] and mirror.edges("a") == []


def _viewed(atom_id: str, rev: int, *required: bool) -> MirrorHead:
    """A head with its view: one logical link to ``t`` per flag, required or not."""
    links = tuple(("uses", "logical", flag, None, False, "t", None) for flag in required)
    view = HeadView("active", None, None, links)
    return MirrorHead(atom_id, rev, atom_id, None, None, None, view=view)


@pytest.mark.req("RD-2")
def test_a_held_head_without_required_links_requires_nothing() -> None:
    mirror = HeadMirror(
        [_viewed("free", 2), _viewed("loose", 1, False, False), _viewed("bound", 1, False, True)]
    )
    assert mirror.requires_nothing(AtomRef("free", 2))
    assert mirror.requires_nothing(AtomRef("loose", 1))
    # A required link: the store walks it (staleness and the target's state).
    assert not mirror.requires_nothing(AtomRef("bound", 1))
    # Not a head held here (an older revision, an unknown atom), or held without its
    # view: unknown, so the store is asked.
    assert not mirror.requires_nothing(AtomRef("free", 1))
    assert not mirror.requires_nothing(AtomRef("nowhere", 1))
    assert not mirror.requires_nothing(AtomRef("a", 1)) and "a" not in mirror
    mirror.apply({"plain": _linked("plain", 1)})
    assert not mirror.requires_nothing(AtomRef("plain", 1))


def _mentioning(atom_id: str, *keys: str, indexed: bool = True) -> MirrorHead:
    return MirrorHead(atom_id, 1, atom_id, None, None, None, (), tuple(sorted(keys)), indexed)


@pytest.mark.req("ENT-4")
def test_the_entity_hop_traverses_entities_within_the_degree_bound() -> None:
    mirror = HeadMirror(
        [
            _mentioning("a", "person:ana", "service:api"),
            _mentioning("b", "person:ana"),
            _mentioning("c", "service:api", "date:2026"),
            _mentioning("d", "date:2026"),
            _mentioning("e", "date:2026", indexed=False),
        ]
    )
    hop = mirror.entity_hop(["a", "zz", "d"], ["service:api", "place:nowhere"], 2)
    assert hop.seeds == [
        ["a", True, ["person:ana", "service:api"]],
        ["d", True, []],  # date:2026 is mentioned by three heads: not traversed
    ]
    assert _rows(hop.entities) == [
        ["service:api", True, [["a", 1, None, None], ["c", 1, None, None]]],
        ["person:ana", False, [["a", 1, None, None], ["b", 1, None, None]]],
    ]
    # A revision that drops a mention changes the degrees at once.
    mirror.apply({"e": None, "c": _mentioning("c", "service:api")})
    assert mirror.entity_hop(["d"], [], 2).seeds == [["d", True, ["date:2026"]]]
    # The mentioners' rows kept from the first hop follow a new revision of one.
    revised = MirrorHead("a", 2, "a", None, None, None, (), ("person:ana", "service:api"), True)
    mirror.apply({"a": revised})
    assert _rows(mirror.entity_hop(["b"], ["service:api"], 2).entities) == [
        ["service:api", True, [["a", 2, None, None], ["c", 1, None, None]]],
        ["person:ana", False, [["a", 2, None, None], ["b", 1, None, None]]],
    ]


@pytest.mark.req("ENT-6", "ENT-4")
def test_the_mirror_hands_query_resolution_every_entity_a_query_word_may_name() -> None:
    def head(atom_id: str, *forms: tuple[str, str, str]) -> MirrorHead:
        keys = tuple(sorted(k for k, _, _ in forms))
        return MirrorHead(atom_id, 1, atom_id, None, None, None, (), keys, True, forms)

    mirror = HeadMirror(
        [
            head("a", ("ingrid vasquez", "ingrid vasquez", "name")),
            head("b", ("ingrid vasquez", "vasquez", "name"), ("kafka", "kafka", "name")),
            head("c", ("game of thrones", "game of thrones", "name")),
        ]
    )
    found = mirror.query_entities(["vasquez", "got", "what"])
    assert [(e.key, sorted(e.forms)) for e in found] == [
        ("game of thrones", ["game of thrones"]),
        ("ingrid vasquez", ["ingrid vasquez", "vasquez"]),
    ]
    # The forms follow the heads: b gone, "vasquez" is no form any more.
    mirror.apply({"b": None})
    [only] = mirror.query_entities(["vasquez"])
    assert only.forms == frozenset({"ingrid vasquez"})
    mirror.apply({"a": None})
    assert mirror.query_entities(["vasquez", "kafka"]) == []


def _rows(entities: list[Sequence[Any]]) -> list[list[Any]]:
    return [[key, named, [list(h) for h in heads]] for key, named, heads in entities]


@pytest.mark.req("ACT-1")
def test_the_vector_leg_takes_the_best_heads_of_a_full_ranking_ties_by_atom_id() -> None:
    """Walked only as far as the limit: the same rows as every head ranked (score
    descending, ties by atomId), hidden parents skipped, removed rows never shown."""
    import random

    rng = random.Random(5)
    for trial in range(30):
        # Few distinct vectors: many exact ties, some across the limit.
        shapes = [(1.0, 0.0, 0.0), (0.6, 0.8, 0.0), (0.0, 0.0, 2.0), (-1.0, 0.2, 0.0)]
        heads = []
        for i in range(rng.randint(1, 40)):
            hidden = rng.random() < 0.2
            heads.append(
                MirrorHead(
                    atom_id=f"x{rng.randint(0, 999):03d}-{i}",
                    rev=1,
                    text="t",
                    atomised_into=2 if hidden else None,
                    archived_at="2026-01-01" if hidden else None,
                    embedding=packed_embedding(rng.choice(shapes)),
                )
            )
        mirror = HeadMirror(heads)
        mirror.apply({h.atom_id: None for h in heads[: len(heads) // 4]})  # rows freed
        query = [rng.uniform(-1, 1) for _ in range(3)]
        live = heads[len(heads) // 4 :]
        for include_archived in (False, True):
            shown = [h for h in live if include_archived or h.atomised_into is None]
            scores = neo4j_cosines(query, [h.vector().tolist() for h in shown])
            want = sorted(
                ((min(1.0, max(0.0, s)), h.atom_id) for h, s in zip(shown, scores, strict=True)),
                key=lambda p: (-p[0], p[1]),
            )
            for limit in (1, 3, 10, 64):
                rows = mirror.semantic(query, limit=limit, include_archived=include_archived)
                got = [(r["semantic"], r["atomId"]) for r in rows]
                assert [a for _, a in got] == [a for _, a in want[:limit]], trial
                assert [s for s, _ in got] == pytest.approx([s for s, _ in want[:limit]])


@pytest.mark.req("ACT-1")
def test_the_lexical_leg_scores_as_score_bodies_does_bit_for_bit() -> None:
    """A term at a time over every posting gives, per body, score_bodies' score
    exactly (same operations, same order), ranked best first with ties by atomId and
    cut at the limit; after removals and replacements (slots reused) too."""
    import random

    rng = random.Random(11)
    words = ["harbour", "boats", "fog", "keeper", "rowing", "storm", "the", "of", "keeper's"]
    for trial in range(60):
        # Few words, short bodies: many equal scores, some across the limit.
        heads: dict[str, MirrorHead] = {}
        for i in range(rng.randint(1, 40)):
            hidden = rng.random() < 0.2
            text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 9)))
            atom_id = f"x{rng.randint(0, 99):02d}-{i}"
            heads[atom_id] = MirrorHead(
                atom_id, 1, text, 2 if hidden else None, "2026-01-01" if hidden else None, None
            )
        mirror = HeadMirror(heads.values())
        for atom_id in list(heads)[: len(heads) // 3]:  # freed slots, some reused
            replaced = rng.random() < 0.5
            heads.pop(atom_id)
            if replaced:
                text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 9)))
                heads[atom_id] = MirrorHead(atom_id, 2, text, None, None, None)
            mirror.apply({atom_id: heads.get(atom_id)})
        query = query_terms(" ".join(rng.choice(words) for _ in range(rng.randint(1, 4))), 3)
        slop = rng.choice([0, 3])
        stats = mirror.stats(query)
        for include_archived in (False, True):
            shown = [
                h
                for h in heads.values()
                if (include_archived or not h.hidden)
                and set(query.terms) & set(analyse(h.text).terms)
            ]
            scores, _ = score_bodies(query, [h.text for h in shown], stats, slop=slop)
            want = sorted(
                ((s, h.atom_id) for h, s in zip(shown, scores, strict=True) if s > 0),
                key=lambda p: (-p[0], p[1]),
            )
            for limit in (1, 3, 10, 64):
                rows = mirror.lexical(
                    query, slop=slop, limit=limit, include_archived=include_archived
                )
                assert [(r[2], r[0]) for r in rows] == want[:limit], trial
                assert all(r[6] == heads[r[0]].text and r[1] == heads[r[0]].rev for r in rows)
        # Every head's score and the query's bound, as the fusion takes them.
        every = list(heads.values())
        raw, bound = score_bodies(query, [h.text for h in every], stats, slop=slop)
        scored = mirror.bm25(query, slop=slop)
        assert scored.stats == stats and scored.bound == bound
        got = mirror.scores_of(scored, [h.atom_id for h in every] + ["absent"])
        assert got == {h.atom_id: s for h, s in zip(every, raw, strict=True)}, trial


@pytest.mark.req("ACT-1")
def test_the_lexical_legs_arrays_are_kept_for_the_mirrors_terms_only() -> None:
    """Words no body holds leave nothing behind (a stream of novel query words must
    not grow the mirror), and a change to a head holding a kept term drops it."""
    mirror = _mirror()
    for i in range(50):
        mirror.lexical(query_terms(f"zzq{i} keeper", 0), slop=0, limit=5, include_archived=False)
    assert set(mirror._arrays) == {"keeper"}
    mirror.apply({"c": _head("c", "The keeper sleeps", rev=2)})
    assert "keeper" not in mirror._arrays
    rows = mirror.lexical(query_terms("keeper", 0), slop=0, limit=5, include_archived=False)
    assert {r[0]: r[1] for r in rows} == {"a": 1, "c": 2}
