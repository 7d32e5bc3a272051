"""Idempotency keys (SPEC §4, IDEM-1 … IDEM-5) against the real Neo4j.

A commit is counted by its Operation node: a replay must not create one.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from write_support import (
    cypher,
    expect_error,
    frozen_clock,
    new,
    observe,
    race,
    ref,
    revise,
    subject_counts,
    write,
)

from graphsvc.core.binding import Binding
from graphsvc.errors import GraphsvcError
from graphsvc.ops.write import WriteOutcome
from graphsvc.service import Service
from graphsvc.store.connection import Database


@pytest.fixture()
def clock(service: Service) -> Iterator[list[float]]:
    with frozen_clock(service) as now:
        yield now


def _operations(db: Database, subject: str) -> int:
    rows = cypher(db, "MATCH (o:Operation {subject: $s}) RETURN count(o) AS n", s=subject)
    return int(rows[0]["n"])


def _plan(x: Any) -> list[dict[str, Any]]:
    return [
        new(
            "a",
            "alpha",
            links=[{"role": "next", "target": {"local": "b"}}, {"role": "x", "target": ref(x)}],
        ),
        new("b", "beta", sources=[{"uri": "https://example.org/b", "version": "1"}]),
        revise("x", ref(x), "x revised"),
    ]


def _reorder(value: Any) -> Any:
    """The same JSON with every object's keys in reverse order."""
    if isinstance(value, dict):
        return {k: _reorder(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reorder(v) for v in value]
    return value


@pytest.mark.req("IDEM-2")
def test_same_key_and_plan_replays_the_stored_result_without_a_second_commit(
    service: Service, db: Database, human: Binding
) -> None:
    x = write(service, human, [new("x", "x")]).changes["x"]
    first = write(service, human, _plan(x), key="k1")
    footprint = subject_counts(db, human.subject)
    again = write(service, human, _plan(x), key="k1")
    assert first.repeated is False and again.repeated is True
    assert again.operation_id == first.operation_id
    assert {k: v.ref for k, v in again.changes.items()} == {
        k: v.ref for k, v in first.changes.items()
    }
    assert again.changes["a"].links == first.changes["a"].links
    assert subject_counts(db, human.subject) == footprint
    assert _operations(db, human.subject) == 2


@pytest.mark.req("IDEM-1", "IDEM-2")
def test_replay_matches_the_plan_regardless_of_json_key_order(
    service: Service, db: Database, human: Binding
) -> None:
    x = write(service, human, [new("x", "x")]).changes["x"]
    first = write(service, human, _plan(x), key="order")
    again = write(service, human, _reorder(_plan(x)), key="order")
    assert again.repeated is True and again.operation_id == first.operation_id
    assert _operations(db, human.subject) == 2


@pytest.mark.req("IDEM-2")
def test_concurrent_identical_retries_commit_exactly_once(
    service: Service, db: Database, human: Binding
) -> None:
    x = write(service, human, [new("x", "x")]).changes["x"]
    results = race(8, lambda _i: write(service, human, _plan(x), key="storm"))
    errors = [r for r in results if isinstance(r, GraphsvcError)]
    assert errors == []
    outcomes: list[WriteOutcome] = results
    assert len({o.operation_id for o in outcomes}) == 1
    assert sorted(o.repeated for o in outcomes) == [False] + [True] * 7
    assert len({tuple(sorted((k, v.ref) for k, v in o.changes.items())) for o in outcomes}) == 1
    assert _operations(db, human.subject) == 2
    revs = cypher(
        db,
        "MATCH (:Atom {subject: $s, atomId: $a})-[:HAS_REVISION]->(r) RETURN collect(r.rev) AS r",
        s=human.subject,
        a=x.atom_id,
    )
    assert sorted(revs[0]["r"]) == [1, 2]


@pytest.mark.req("IDEM-3")
def test_same_key_with_a_different_plan_is_idempotency_conflict(
    service: Service, db: Database, human: Binding
) -> None:
    x = write(service, human, [new("x", "x")]).changes["x"]
    write(service, human, _plan(x), key="k")
    footprint = subject_counts(db, human.subject)
    changed = _plan(x)
    changed[1]["content"]["text"] = "beta, but different"
    with expect_error("IDEMPOTENCY_CONFLICT"):
        write(service, human, changed, key="k")
    with expect_error("IDEMPOTENCY_CONFLICT"):
        write(service, human, _plan(x)[:2], key="k")
    assert subject_counts(db, human.subject) == footprint


@pytest.mark.req("IDEM-1")
def test_key_is_bound_to_subject_policy_and_actor(
    service: Service, db: Database, human: Binding
) -> None:
    plan = [new("a", "same plan")]
    first = write(service, human, plan, key="shared")
    others = [
        replace(human, actor_id="carol"),
        replace(human, policy="strict"),
        replace(human, subject=f"other-{uuid.uuid4().hex[:8]}"),
    ]
    for binding in others:
        out = write(service, binding, plan, key="shared")
        assert out.repeated is False and out.operation_id != first.operation_id
        assert out.changes["a"].atom_id != first.changes["a"].atom_id
    # Three commits landed in this subject (human, carol, strict policy).
    assert _operations(db, human.subject) == 3


@pytest.mark.req("IDEM-1", "IDEM-3")
def test_tokens_enter_the_fingerprint_by_what_they_declare(
    service: Service, agent: Binding
) -> None:
    human = Binding(agent.subject, agent.policy, "human", "seeder")
    seeded = write(service, human, [new("x", "x"), new("y", "y")]).changes
    x, y = seeded["x"], seeded["y"]
    first = write(
        service, agent, [new("a", "A", token=observe(service, agent, basis=[ref(x)]))], key="t"
    )
    # A fresh token observed from the same declared inputs is the same plan ...
    again = write(
        service, agent, [new("a", "A", token=observe(service, agent, basis=[ref(x)]))], key="t"
    )
    assert again.repeated is True and again.operation_id == first.operation_id
    # ... one with other inputs is another plan.
    with expect_error("IDEMPOTENCY_CONFLICT"):
        write(
            service,
            agent,
            [new("a", "A", token=observe(service, agent, basis=[ref(y)]))],
            key="t",
        )


@pytest.mark.req("IDEM-4")
def test_replay_after_the_token_expired_returns_the_stored_result(
    service: Service, db: Database, agent: Binding, clock: list[float]
) -> None:
    token = observe(service, agent)
    plan = [new("a", "written in time", token=token)]
    first = write(service, agent, plan, key="late-retry")
    clock[0] += service.settings.lifetimes.token_lifetime_s + 60
    footprint = subject_counts(db, agent.subject)
    again = write(service, agent, plan, key="late-retry")
    assert again.repeated is True and again.operation_id == first.operation_id
    assert again.changes["a"].ref == first.changes["a"].ref
    # A first commit with the same expired token is refused.
    with expect_error("TOKEN_INVALID", names="expired"):
        write(service, agent, plan, key="new-key")
    with expect_error("TOKEN_INVALID", names="expired"):
        write(service, agent, plan)
    assert subject_counts(db, agent.subject) == footprint


@pytest.mark.req("IDEM-1", "IDEM-5")
def test_replay_under_a_newer_auth_generation_is_permission_denied(
    service: Service, db: Database, human: Binding
) -> None:
    plan = [new("a", "A")]
    write(service, human, plan, key="gen")
    footprint = subject_counts(db, human.subject)
    with expect_error("PERMISSION_DENIED"):
        write(service, replace(human, auth_generation=2), plan, key="gen")
    assert subject_counts(db, human.subject) == footprint


@pytest.mark.req("IDEM-5")
@pytest.mark.parametrize("how", ["purge", "tombstone", "atoms-gone"])
def test_replay_of_a_purged_result_is_refused_and_nothing_is_resurrected(
    service: Service, db: Database, human: Binding, how: str
) -> None:
    s = human.subject
    plan = [
        new("a", "to be purged"),
        new("b", "also purged", links=[{"role": "r", "target": {"local": "a"}}]),
    ]
    first = write(service, human, plan, key="gone")
    if how == "purge":
        service.purge(human, first.changes["a"].atom_id)
    else:
        # Simulate what a finished purge leaves: the atoms erased and (or not yet)
        # the key reduced to a digest-free tombstone.
        cypher(
            db,
            "MATCH (a:Atom {subject: $s}) OPTIONAL MATCH (a)-[:HAS_REVISION]->(r) "
            "DETACH DELETE a, r",
            s=s,
        )
        if how == "tombstone":
            cypher(
                db,
                "MATCH (k:IdempotencyKey {subject: $s}) "
                "SET k = {scopeKey: k.scopeKey, subject: k.subject, state: 'purged'}",
                s=s,
            )
    left = subject_counts(db, s)
    with expect_error("DEPENDENCY_INVALID", names="IDEM-5"):
        write(service, human, plan, key="gone")
    assert subject_counts(db, s) == left
    purged = cypher(
        db,
        "MATCH (n {subject: $s, atomId: $a}) WHERE n:Atom OR n:Revision RETURN count(n) AS n",
        s=s,
        a=first.changes["a"].atom_id,
    )
    assert purged == [{"n": 0}]


@pytest.mark.req("IDEM-2")
def test_replay_returns_the_current_view_of_the_stored_revisions(
    service: Service, human: Binding
) -> None:
    plan = [new("a", "A1")]
    first = write(service, human, plan, key="view")
    write(service, human, [revise("a", ref(first.changes["a"]), "A2")])
    again = write(service, human, plan, key="view")
    assert again.repeated is True
    assert again.changes["a"].ref == first.changes["a"].ref
    assert again.changes["a"].head is False and again.changes["a"].text == "A1"


@pytest.mark.req("IDEM-2", "IDEM-3")
def test_a_refused_batch_does_not_use_up_its_key(
    service: Service, db: Database, human: Binding
) -> None:
    x = write(service, human, [new("x", "x1")]).changes["x"]
    write(service, human, [revise("x", ref(x), "x2")])
    with expect_error("CAS_CONFLICT"):
        write(service, human, [revise("x", ref(x), "stale")], key="retry-me")
    fixed = write(service, human, [revise("x", ref(x.atom_id, 2), "x3")], key="retry-me")
    assert fixed.repeated is False and fixed.changes["x"].rev == 3
    assert _operations(db, human.subject) == 3


@pytest.mark.req("IDEM-3", "IDEM-2")
def test_racing_different_plans_under_one_key_commit_exactly_one(
    service: Service, db: Database, human: Binding
) -> None:
    results = race(4, lambda i: write(service, human, [new("a", f"plan {i}")], key="contested"))
    wins = [r for r in results if isinstance(r, WriteOutcome)]
    losses = [r for r in results if isinstance(r, GraphsvcError)]
    assert len(wins) == 1 and wins[0].repeated is False
    assert [e.code for e in losses] == ["IDEMPOTENCY_CONFLICT"] * 3
    texts = cypher(db, "MATCH (r:Revision {subject: $s}) RETURN r.text AS t", s=human.subject)
    assert texts == [{"t": wins[0].changes["a"].text}]
    assert _operations(db, human.subject) == 1
