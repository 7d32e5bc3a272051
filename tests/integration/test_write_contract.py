"""The write contract (SPEC §2, WR-1 … WR-9) against the real Neo4j, through the Service.

Each test writes into its own fresh subject and checks both the returned
WriteOutcome and what Neo4j stores, read directly with Cypher.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from functools import partial
from typing import Any

import pytest
from write_support import (
    cypher,
    digest_of,
    expect_error,
    new,
    observe,
    race,
    ref,
    retire,
    revise,
    subject_counts,
    write,
)

from graphsvc.core.binding import Binding
from graphsvc.core.write_models import AtomRef
from graphsvc.errors import GraphsvcError
from graphsvc.ops.write import WriteOutcome
from graphsvc.service import Service
from graphsvc.store.connection import Database
from graphsvc.store.views import load_views


def _stored_links(db: Database, subject: str, atom_id: str, rev: int) -> list[dict[str, Any]]:
    return cypher(
        db,
        "MATCH (r:Revision {subject: $s, atomId: $a, rev: $rev})-[l:LINK]->(t) "
        "RETURN l.role AS role, l.at AS at, l.required AS required, l.orderKey AS orderKey, "
        "labels(t) AS labels, t.atomId AS atomId, t.rev AS rev ORDER BY l.ordinal",
        s=subject,
        a=atom_id,
        rev=rev,
    )


def _stored_cites(db: Database, subject: str, atom_id: str, rev: int) -> list[dict[str, Any]]:
    return cypher(
        db,
        "MATCH (r:Revision {subject: $s, atomId: $a, rev: $rev})-[c:CITES]->(src:Source) "
        "RETURN src.uri AS uri, src.version AS version, src.digest AS digest, "
        "c.start AS start, c.end AS end, c.unit AS unit, c.verified AS verified "
        "ORDER BY c.ordinal",
        s=subject,
        a=atom_id,
        rev=rev,
    )


# ----------------------------------------------------------------- WR-1 / WR-2


@pytest.mark.req("WR-1")
def test_empty_batch_is_invalid_input(service: Service, human: Binding) -> None:
    with expect_error("INVALID_INPUT", names="WR-1"):
        write(service, human, [])


@pytest.mark.req("WR-1")
def test_duplicate_change_id_is_invalid_input_naming_the_id(
    service: Service, db: Database, human: Binding
) -> None:
    with expect_error("INVALID_INPUT", names="'dup'"):
        write(service, human, [new("dup", "one"), new("dup", "two")])
    assert subject_counts(db, human.subject) == (0, 0)


@pytest.mark.req("WR-2")
@pytest.mark.parametrize("missing", ["links", "sources", "text"])
def test_missing_links_sources_or_text_is_invalid_input(
    service: Service, db: Database, human: Binding, missing: str
) -> None:
    change = new("c1", "body")
    if missing == "sources":
        del change["sources"]
    else:
        del change["content"][missing]
    with expect_error("INVALID_INPUT", names="c1" if missing != "text" else None):
        write(service, human, [new("ok", "fine"), change])
    assert subject_counts(db, human.subject) == (0, 0)


@pytest.mark.req("WR-2")
def test_revise_without_links_is_invalid_input_not_an_implicit_keep(
    service: Service, human: Binding
) -> None:
    first = write(service, human, [new("a", "A"), new("b", "B")]).changes
    a, b = first["a"], first["b"]
    write(service, human, [revise("a2", ref(a), "A", links=[{"role": "r", "target": ref(b)}])])
    change = revise("a3", ref(a.atom_id, 2), "A3")
    del change["content"]["links"]
    with expect_error("INVALID_INPUT", names="a3"):
        write(service, human, [change])


@pytest.mark.req("WR-2")
def test_revise_replaces_links_and_sources_wholesale(
    service: Service, db: Database, human: Binding
) -> None:
    s = human.subject
    base = write(service, human, [new("x", "X"), new("y", "Y")]).changes
    x, y = base["x"], base["y"]
    v1 = write(
        service,
        human,
        [
            new(
                "a",
                "A first",
                links=[{"role": "cites", "target": ref(x)}, {"role": "see", "target": ref(y)}],
                sources=[{"uri": "https://example.org/one"}, {"uri": "https://example.org/two"}],
            )
        ],
    ).changes["a"]
    v2 = write(
        service,
        human,
        [
            revise(
                "a",
                ref(v1),
                "A second",
                links=[{"role": "other", "target": ref(y)}],
                sources=[{"uri": "https://example.org/three"}],
            )
        ],
    ).changes["a"]
    assert v2.rev == 2 and v2.head
    assert [(lk.role, lk.target) for lk in v2.links] == [("other", y.ref)]
    assert [src["uri"] for src in v2.sources] == ["https://example.org/three"]
    # Stored: the new revision holds exactly the new links and citations ...
    assert [(lk["role"], lk["atomId"]) for lk in _stored_links(db, s, v1.atom_id, 2)] == [
        ("other", y.atom_id)
    ]
    assert [c["uri"] for c in _stored_cites(db, s, v1.atom_id, 2)] == ["https://example.org/three"]
    # ... and the old revision is unchanged (revisions are immutable).
    assert [lk["role"] for lk in _stored_links(db, s, v1.atom_id, 1)] == ["cites", "see"]
    assert [c["uri"] for c in _stored_cites(db, s, v1.atom_id, 1)] == [
        "https://example.org/one",
        "https://example.org/two",
    ]
    v3 = write(service, human, [revise("a", ref(v2), "A third")]).changes["a"]
    assert v3.links == () and v3.sources == ()
    assert _stored_links(db, s, v1.atom_id, 3) == [] and _stored_cites(db, s, v1.atom_id, 3) == []


# ----------------------------------------------------------------------- WR-3


@pytest.mark.req("WR-3", "WR-7")
def test_revise_with_stale_target_is_cas_conflict_and_nothing_commits(
    service: Service, db: Database, human: Binding
) -> None:
    a = write(service, human, [new("a", "A1")]).changes["a"]
    write(service, human, [revise("a", ref(a), "A2")])
    before = subject_counts(db, human.subject)
    with expect_error("CAS_CONFLICT", names="'late'") as caught:
        write(service, human, [new("fresh", "would be new"), revise("late", ref(a), "A2 again")])
    assert caught[0].details["head"] == {"atomId": a.atom_id, "rev": 2}
    assert subject_counts(db, human.subject) == before


@pytest.mark.req("WR-3")
def test_two_changes_to_one_logical_atom_in_a_batch_is_invalid_input(
    service: Service, db: Database, human: Binding
) -> None:
    a = write(service, human, [new("a", "A1")]).changes["a"]
    before = subject_counts(db, human.subject)
    with expect_error("INVALID_INPUT", names="'second'"):
        write(service, human, [revise("first", ref(a), "A2"), retire("second", ref(a))])
    assert subject_counts(db, human.subject) == before


@pytest.mark.req("WR-3", "WR-7")
def test_target_that_was_never_issued_is_dependency_invalid(
    service: Service, human: Binding
) -> None:
    a = write(service, human, [new("a", "A1")]).changes["a"]
    with expect_error("DEPENDENCY_INVALID", names="'ahead'"):
        write(service, human, [revise("ahead", ref(a.atom_id, 7), "future")])
    with expect_error("DEPENDENCY_INVALID", names="'ghost'"):
        write(service, human, [revise("ghost", ref(uuid.uuid4().hex, 1), "nothing")])


def _revise_as(
    service: Service, human: Binding, target: dict[str, Any], round_no: int, i: int
) -> WriteOutcome:
    return write(service, human, [revise("a", target, f"r{round_no} by {i}")])


@pytest.mark.req("WR-3")
def test_concurrent_revisions_of_one_head_exactly_one_wins_without_lost_updates(
    service: Service, db: Database, human: Binding
) -> None:
    a = write(service, human, [new("a", "v1")]).changes["a"]
    head = ref(a)
    for round_no in (1, 2):
        results = race(8, partial(_revise_as, service, human, head, round_no))
        results_by = dict(enumerate(results))
        wins = {i: r for i, r in results_by.items() if not isinstance(r, GraphsvcError)}
        losses = [r for r in results if isinstance(r, GraphsvcError)]
        assert len(wins) == 1, results
        assert len(losses) == 7 and {e.code for e in losses} == {"CAS_CONFLICT"}
        ((winner, outcome),) = wins.items()
        view = outcome.changes["a"]
        assert view.rev == round_no + 1 and view.text == f"r{round_no} by {winner}"
        head = ref(view)
    rows = cypher(
        db,
        "MATCH (x:Atom {subject: $s, atomId: $a})-[:HAS_REVISION]->(r:Revision) "
        "RETURN r.rev AS rev, r.text AS text, r:Current AS current ORDER BY rev",
        s=human.subject,
        a=a.atom_id,
    )
    assert [r["rev"] for r in rows] == [1, 2, 3]
    assert [r["current"] for r in rows] == [False, False, True]
    chain = cypher(
        db,
        "MATCH (x:Atom {subject: $s, atomId: $a})-[:HEAD]->(h) "
        "MATCH p = (h)-[:SUPERSEDES*]->(first:Revision {rev: 1}) "
        "RETURN h.rev AS head, length(p) AS hops, x.headRev AS headRev",
        s=human.subject,
        a=a.atom_id,
    )
    assert chain == [{"head": 3, "hops": 2, "headRev": 3}]


# ----------------------------------------------------------------------- WR-4


@pytest.mark.req("WR-4")
def test_retire_keeps_body_links_sources_and_provenance(
    service: Service, db: Database, agent: Binding
) -> None:
    s = agent.subject
    basis = write(service, agent, [new("n", "neighbour", token=observe(service, agent))]).changes[
        "n"
    ]
    token = observe(service, agent, basis=[ref(basis)])
    a = write(
        service,
        agent,
        [
            new(
                "a",
                "the body that stays",
                links=[
                    {"role": "about", "target": ref(basis)},
                    {"role": "follows", "target": {"ref": ref(basis), "at": "logical"}},
                ],
                sources=[{"uri": "https://example.org/doc", "version": "3"}],
                token=token,
            )
        ],
    ).changes["a"]
    retired = write(
        service, agent, [retire("gone", ref(a), token=observe(service, agent))]
    ).changes["gone"]
    assert retired.rev == 2 and retired.state == "retired" and retired.head
    assert retired.text == a.text and retired.links == a.links and retired.sources == a.sources
    # Directly in Neo4j: the retired revision carries the same body, links,
    # citations and GENERATED_FROM provenance, and has left current reads.
    rows = cypher(
        db,
        "MATCH (old:Revision {subject: $s, atomId: $a, rev: 1}), "
        "(new:Revision {subject: $s, atomId: $a, rev: 2}) "
        "RETURN old.text AS oldText, new.text AS newText, old.digest AS oldDigest, "
        "new.digest AS newDigest, new.state AS state, new:Current AS current, "
        "old:Current AS oldCurrent, "
        "[(old)-[:GENERATED_FROM]->(i) | i.tokenId] AS oldGen, "
        "[(new)-[:GENERATED_FROM]->(i) | i.tokenId] AS newGen, "
        "[(new)-[:DECIDED_FROM]->(i) | i.tokenId] AS decided",
        s=s,
        a=a.atom_id,
    )[0]
    assert rows["newText"] == rows["oldText"] == "the body that stays"
    assert rows["newDigest"] == rows["oldDigest"] == digest_of("the body that stays")
    assert rows["state"] == "retired" and not rows["current"] and not rows["oldCurrent"]
    assert rows["newGen"] == rows["oldGen"] and len(rows["oldGen"]) == 1
    assert len(rows["decided"]) == 1 and rows["decided"] != rows["oldGen"]
    assert _stored_links(db, s, a.atom_id, 2) == _stored_links(db, s, a.atom_id, 1)
    assert len(_stored_links(db, s, a.atom_id, 2)) == 2
    assert _stored_cites(db, s, a.atom_id, 2) == _stored_cites(db, s, a.atom_id, 1)


@pytest.mark.req("WR-4", "WR-2")
def test_retire_takes_no_content(service: Service, human: Binding) -> None:
    a = write(service, human, [new("a", "A")]).changes["a"]
    change = retire("r", ref(a))
    change["content"] = {"text": "new body", "links": []}
    with expect_error("INVALID_INPUT", names="'r'"):
        write(service, human, [change])


# ----------------------------------------------------------------- WR-5 / WR-6


@pytest.mark.req("WR-5")
def test_local_targets_allow_forward_refs_cycles_and_several_roles_to_one_neighbour(
    service: Service, db: Database, human: Binding
) -> None:
    out = write(
        service,
        human,
        [
            new("a", "A", links=[{"role": "next", "target": {"local": "b"}}]),
            new(
                "b",
                "B",
                links=[
                    {"role": "next", "target": {"local": "c"}},
                    {"role": "prev", "target": {"local": "a"}},
                ],
            ),
            new(
                "c",
                "C",
                links=[
                    {"role": "next", "target": {"local": "a"}},
                    {"role": "part-of", "target": {"local": "a", "orderKey": "1"}},
                    {"role": "see-also", "target": {"local": "a", "required": True}},
                    {"role": "self", "target": {"local": "c"}},
                ],
            ),
        ],
    )
    a, b, c = (out.changes[k] for k in "abc")
    assert [(lk.role, lk.target) for lk in a.links] == [("next", b.ref)]
    assert [(lk.role, lk.target) for lk in b.links] == [("next", c.ref), ("prev", a.ref)]
    assert [(lk.role, lk.target, lk.order_key, lk.required) for lk in c.links] == [
        ("next", a.ref, None, False),
        ("part-of", a.ref, "1", False),
        ("see-also", a.ref, None, True),
        ("self", c.ref, None, False),
    ]
    stored = _stored_links(db, human.subject, c.atom_id, 1)
    assert [(lk["role"], lk["atomId"], lk["rev"]) for lk in stored] == [
        ("next", a.atom_id, 1),
        ("part-of", a.atom_id, 1),
        ("see-also", a.atom_id, 1),
        ("self", c.atom_id, 1),
    ]


@pytest.mark.req("WR-5")
def test_local_target_into_a_revise_of_this_batch_points_at_the_new_revision(
    service: Service, human: Binding
) -> None:
    a = write(service, human, [new("a", "A1")]).changes["a"]
    out = write(
        service,
        human,
        [
            new("n", "N", links=[{"role": "about", "target": {"local": "a"}}]),
            revise("a", ref(a), "A2", links=[{"role": "back", "target": {"local": "n"}}]),
        ],
    )
    assert out.changes["n"].links[0].target == out.changes["a"].ref == AtomRef(a.atom_id, 2)


@pytest.mark.req("WR-5")
def test_local_id_means_nothing_after_commit(
    service: Service, db: Database, human: Binding
) -> None:
    write(service, human, [new("a", "A")])
    before = subject_counts(db, human.subject)
    with expect_error("INVALID_INPUT", names="'a'"):
        write(service, human, [new("b", "B", links=[{"role": "r", "target": {"local": "a"}}])])
    assert subject_counts(db, human.subject) == before


@pytest.mark.req("WR-6")
def test_link_defaults_are_observed_and_not_required(service: Service, human: Binding) -> None:
    t = write(service, human, [new("t", "T")]).changes["t"]
    out = write(
        service,
        human,
        [
            new(
                "a",
                "A",
                links=[
                    {"role": "bare", "target": ref(t)},
                    {"role": "wrapped", "target": {"ref": ref(t)}},
                    {"role": "local", "target": {"local": "b"}},
                ],
            ),
            new("b", "B"),
        ],
    )
    links = out.changes["a"].links
    assert [(lk.role, lk.at, lk.required, lk.unavailable) for lk in links] == [
        ("bare", "observed", False, False),
        ("wrapped", "observed", False, False),
        ("local", "observed", False, False),
    ]


@pytest.mark.req("WR-6")
def test_logical_link_points_at_the_atom_and_follows_the_head_observed_stays_pinned(
    service: Service, db: Database, human: Binding
) -> None:
    s = human.subject
    t = write(service, human, [new("t", "T1")]).changes["t"]
    a = write(
        service,
        human,
        [
            new(
                "a",
                "A",
                links=[
                    {"role": "pinned", "target": {"ref": ref(t), "at": "observed"}},
                    {"role": "follows", "target": {"ref": ref(t), "at": "logical"}},
                    {"role": "local-logical", "target": {"local": "n", "at": "logical"}},
                ],
            ),
            new("n", "N"),
        ],
    ).changes["a"]
    stored = _stored_links(db, s, a.atom_id, 1)
    assert [(lk["role"], lk["at"], lk["labels"][0], lk["rev"]) for lk in stored] == [
        ("pinned", "observed", "Revision", 1),
        ("follows", "logical", "Atom", None),
        ("local-logical", "logical", "Atom", None),
    ]
    write(service, human, [revise("t", ref(t), "T2")])
    again = load_views(db, s, [AtomRef(a.atom_id, 1)])[AtomRef(a.atom_id, 1)]
    assert [(lk.role, lk.target) for lk in again.links[:2]] == [
        ("pinned", AtomRef(t.atom_id, 1)),
        ("follows", AtomRef(t.atom_id, 2)),
    ]


# ----------------------------------------------------------------------- WR-7


@pytest.mark.req("WR-7")
@pytest.mark.parametrize(
    ("limit", "changes"),
    [
        ("changes", [new(f"c{i}", "x") for i in range(257)]),
        ("bodyBytes", [new("big", "é" * 32_769)]),
        ("links", [new("many", "x", links=[{"role": "r", "target": {"local": "many"}}] * 129)]),
        ("sources", [new("cited", "x", sources=[{"uri": "https://e.org"}] * 129)]),
        ("writeBytes", [new(f"c{i}", "y" * 65_000) for i in range(33)]),
    ],
)
def test_configured_size_limits_are_budget_exceeded(
    service: Service, db: Database, human: Binding, limit: str, changes: list[dict[str, Any]]
) -> None:
    with expect_error("BUDGET_EXCEEDED") as caught:
        write(service, human, changes)
    assert caught[0].details["limit"] == limit
    assert subject_counts(db, human.subject) == (0, 0)


@pytest.mark.req("WR-7", "API-2")
def test_link_to_another_subjects_atom_is_indistinguishable_from_a_missing_one(
    service: Service, db: Database, human: Binding
) -> None:
    other = Binding(f"other-{uuid.uuid4().hex[:8]}", "default", "human", "bob")
    theirs = write(service, other, [new("t", "their secret")]).changes["t"]
    missing = uuid.uuid4().hex
    before = subject_counts(db, human.subject)
    messages = []
    for atom_id in (theirs.atom_id, missing):
        for change in (
            new("a", "A", links=[{"role": "r", "target": ref(atom_id, 1)}]),
            new(
                "a", "A", links=[{"role": "r", "target": {"ref": ref(atom_id, 1), "at": "logical"}}]
            ),
            revise("a", ref(atom_id, 1), "take over"),
            new("a", "A", sources=[{"uri": f"atom:{atom_id}", "version": "1"}]),
        ):
            with expect_error("DEPENDENCY_INVALID", names="'a'") as caught:
                write(service, human, [change])
            messages.append(caught[0].message.replace(atom_id, "<id>"))
    assert messages[:4] == messages[4:]
    assert subject_counts(db, human.subject) == before
    # The other subject's atom is untouched.
    assert cypher(
        db, "MATCH (a:Atom {atomId: $a}) RETURN a.subject AS s, a.headRev AS h", a=theirs.atom_id
    ) == [{"s": other.subject, "h": 1}]


@pytest.mark.req("WR-7")
def test_unfinished_purge_blocks_writes_with_purge_pending(
    service: Service, db: Database, human: Binding
) -> None:
    a = write(service, human, [new("a", "A")]).changes["a"]
    cypher(db, "CREATE (:PurgeMarker {subject: $s, atomId: $a})", s=human.subject, a=a.atom_id)
    before = subject_counts(db, human.subject)
    with expect_error("PURGE_PENDING"):
        write(service, human, [new("b", "B")])
    assert subject_counts(db, human.subject) == before
    cypher(db, "MATCH (p:PurgeMarker {subject: $s}) DELETE p", s=human.subject)
    assert write(service, human, [new("b", "B")]).changes["b"].rev == 1


@pytest.mark.req("CORE-5", "WR-7")
def test_failure_in_the_last_change_leaves_no_trace_of_the_earlier_ones(
    service: Service, db: Database, human: Binding
) -> None:
    before = subject_counts(db, human.subject)
    changes = [
        new(f"c{i}", f"body {i}", links=[{"role": "n", "target": {"local": f"c{i + 1}"}}])
        for i in range(9)
    ]
    changes.append(new("c9", "last", links=[{"role": "r", "target": ref(uuid.uuid4().hex, 1)}]))
    with expect_error("DEPENDENCY_INVALID", names="'c9'"):
        write(service, human, changes)
    assert subject_counts(db, human.subject) == before == (0, 0)


# ------------------------------------------------------------ citations (§2)


@pytest.mark.req("WR-2", "WR-7")
@pytest.mark.parametrize(
    ("unit", "end_ok", "end_bad"),
    [("byte", 15, 16), ("char", 13, 14), ("line", 3, 4)],
)
def test_store_citation_range_is_checked_in_its_unit(
    service: Service, db: Database, human: Binding, unit: str, end_ok: int, end_bad: int
) -> None:
    text = "héllo\nwörld\n!"  # 13 chars, 15 bytes, 3 lines
    src = write(service, human, [new("src", text)]).changes["src"]
    uri = f"atom:{src.atom_id}"
    ok = write(
        service,
        human,
        [
            new(
                "c",
                "cites",
                sources=[
                    {
                        "uri": uri,
                        "version": "1",
                        "digest": digest_of(text),
                        "range": {"start": 0, "end": end_ok, "unit": unit},
                    }
                ],
            )
        ],
    ).changes["c"]
    assert ok.sources[0]["verified"] is True
    assert ok.sources[0]["range"] == {"start": 0, "end": end_ok, "unit": unit}
    stored = _stored_cites(db, human.subject, ok.atom_id, 1)
    assert stored == [
        {
            "uri": uri,
            "version": "1",
            "digest": digest_of(text),
            "start": 0,
            "end": end_ok,
            "unit": unit,
            "verified": True,
        }
    ]
    before = subject_counts(db, human.subject)
    bad = {"uri": uri, "version": "1", "range": {"start": 1, "end": end_bad, "unit": unit}}
    with expect_error("INVALID_INPUT", names="'c2'"):
        write(service, human, [new("c2", "cites too far", sources=[bad])])
    assert subject_counts(db, human.subject) == before


@pytest.mark.req("WR-2", "WR-7")
def test_store_citation_with_wrong_digest_or_reversed_range_is_invalid_input(
    service: Service, db: Database, human: Binding
) -> None:
    src = write(service, human, [new("src", "source text")]).changes["src"]
    before = subject_counts(db, human.subject)
    with expect_error("INVALID_INPUT", names="'c'"):
        write(
            service,
            human,
            [
                new(
                    "c",
                    "x",
                    sources=[
                        {"uri": f"atom:{src.atom_id}", "version": "1", "digest": digest_of("no")}
                    ],
                )
            ],
        )
    with expect_error("INVALID_INPUT", names="'c'"):
        write(
            service,
            human,
            [
                new(
                    "c",
                    "x",
                    sources=[
                        {
                            "uri": "https://e.org",
                            "range": {"start": 5, "end": 2, "unit": "char"},
                        }
                    ],
                )
            ],
        )
    with expect_error("INVALID_INPUT", names="'c'"):
        write(
            service,
            human,
            [new("c", "x", sources=[{"uri": f"atom:{src.atom_id}", "version": "v1"}])],
        )
    assert subject_counts(db, human.subject) == before


@pytest.mark.req("WR-2")
def test_citation_of_an_old_revision_checks_that_revisions_text(
    service: Service, human: Binding
) -> None:
    src = write(service, human, [new("s", "short")]).changes["s"]
    write(service, human, [revise("s", ref(src), "a much longer second body")])
    uri = f"atom:{src.atom_id}"
    long_range = {"start": 0, "end": 20, "unit": "char"}
    with expect_error("INVALID_INPUT", names="'old'"):
        write(
            service,
            human,
            [new("old", "x", sources=[{"uri": uri, "version": "1", "range": long_range}])],
        )
    head = write(service, human, [new("new", "x", sources=[{"uri": uri, "range": long_range}])])
    assert head.changes["new"].sources[0]["version"] == "2"
    assert head.changes["new"].sources[0]["verified"] is True


@pytest.mark.req("WR-2")
def test_external_citation_is_recorded_as_declared(
    service: Service, db: Database, human: Binding
) -> None:
    cite = {
        "uri": "https://example.org/paper.pdf",
        "version": "2024-01",
        "digest": digest_of("whatever the host saw"),
        "range": {"start": 10, "end": 99999, "unit": "byte"},
    }
    a = write(service, human, [new("a", "A", sources=[cite])]).changes["a"]
    assert a.sources == ({**cite, "verified": False},)
    stored = _stored_cites(db, human.subject, a.atom_id, 1)
    assert stored == [
        {
            "uri": cite["uri"],
            "version": "2024-01",
            "digest": cite["digest"],
            "start": 10,
            "end": 99999,
            "unit": "byte",
            "verified": False,
        }
    ]


# ----------------------------------------------------------------- WR-8 / WR-9


@pytest.mark.req("WR-8")
def test_outcome_maps_every_change_and_complete_indexing_is_queryable(
    service: Service, db: Database, human: Binding
) -> None:
    word = "zq" + uuid.uuid4().hex[:10]
    t = write(service, human, [new("t", "target")]).changes["t"]
    out = write(
        service,
        human,
        [
            new("a", f"alpha {word} text"),
            revise("t", ref(t), f"target revised {word}"),
            new("c", "gamma", links=[{"role": "r", "target": {"local": "a"}}]),
        ],
    )
    assert set(out.changes) == {"a", "t", "c"} and out.repeated is False
    assert out.indexing == "complete"
    assert {k: (v.rev, v.head, v.state) for k, v in out.changes.items()} == {
        "a": (1, True, "active"),
        "t": (2, True, "active"),
        "c": (1, True, "active"),
    }
    hits = cypher(
        db,
        "CALL db.index.fulltext.queryNodes('current_text', $q) YIELD node "
        "WHERE node.subject = $s RETURN node.atomId AS atomId, node.rev AS rev",
        q=word,
        s=human.subject,
    )
    assert sorted((h["atomId"], h["rev"]) for h in hits) == sorted(
        [(out.changes["a"].atom_id, 1), (t.atom_id, 2)]
    )
    vec = service.embedder.embed([f"alpha {word} text"])[0]
    near = cypher(
        db,
        "CALL db.index.vector.queryNodes('current_embedding', 5, $v) YIELD node, score "
        "RETURN node.atomId AS atomId, node.subject AS s, score",
        v=list(vec),
    )
    assert near[0]["atomId"] == out.changes["a"].atom_id and near[0]["score"] > 0.999


def _structure(db: Database, subject: str) -> dict[str, Any]:
    """Labels and relationship types (with counts) of a subject, and its atoms' states."""
    rows = cypher(
        db,
        "MATCH (n {subject: $s}) "
        "CALL (n) { UNWIND labels(n) AS l RETURN collect(l) AS ls } "
        "CALL (n) { OPTIONAL MATCH (n)-[r]->() RETURN collect(type(r)) AS ts } "
        "RETURN ls, ts, n.state AS state",
        s=subject,
    )
    labels: dict[str, int] = {}
    types: dict[str, int] = {}
    for row in rows:
        for label in row["ls"]:
            labels[label] = labels.get(label, 0) + 1
        for t in row["ts"]:
            types[t] = types.get(t, 0) + 1
    states = sorted(str(r["state"]) for r in rows if r["state"] is not None)
    return {"labels": labels, "types": types, "states": states}


@pytest.mark.req("WR-9")
@pytest.mark.req("CORE-4")
def test_role_names_never_become_graph_structure(
    service: Service, db: Database, human: Binding
) -> None:
    roles = ["parent", "child", "HAS_REVISION", "SUPERSEDES", "x]->(m) DETACH DELETE m //", "成员"]

    def batch(role_names: list[str]) -> list[dict[str, Any]]:
        links = [{"role": role, "target": {"local": "hub"}} for role in role_names]
        return [new("hub", "hub"), new("leaf", "leaf", links=links)]

    out = write(service, human, batch(roles))
    assert [lk.role for lk in out.changes["leaf"].links] == roles
    assert {v.state for v in out.changes.values()} == {"active"}
    # The same batch with meaningless role names stores exactly the same structure:
    # no label, relationship type, extra edge or state comes from a role's name.
    control = replace(human, subject=f"control-{uuid.uuid4().hex[:8]}")
    write(service, control, batch([f"role{i}" for i in range(len(roles))]))
    assert _structure(db, human.subject) == _structure(db, control.subject)
    stored = cypher(
        db,
        "MATCH (:Revision {subject: $s, atomId: $a})-[l:LINK]->() "
        "RETURN l.role AS role ORDER BY l.ordinal",
        s=human.subject,
        a=out.changes["leaf"].atom_id,
    )
    assert [r["role"] for r in stored] == roles
