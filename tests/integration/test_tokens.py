"""InputTokens and ``observe`` (SPEC §3, TOK-1 … TOK-7) against the real Neo4j.

Provenance is checked directly in Neo4j: a revision written with a token is
GENERATED_FROM the token's Input record, which holds BASIS / PRESENTED /
WATCHES / CITES / INHERITS edges to what the host declared.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest
from write_support import (
    cypher,
    digest_of,
    expect_error,
    frozen_clock,
    new,
    observe,
    ref,
    subject_counts,
    write,
)

from graphsvc.core.binding import Binding
from graphsvc.core.mac import open_sealed, seal
from graphsvc.core.write_models import AtomView
from graphsvc.service import Service
from graphsvc.store.connection import Database


@pytest.fixture()
def clock(service: Service) -> Iterator[list[float]]:
    """The service's clock, frozen; tests move it by assigning ``clock[0]``."""
    with frozen_clock(service) as now:
        yield now


def _tid(service: Service, token: str) -> str:
    return str(open_sealed(service.secret, "input-token", token)["tid"])


def _seed(service: Service, binding: Binding, *texts: str) -> list[AtomView]:
    """Atoms to refer to, written by a human of the same subject."""
    human = Binding(binding.subject, binding.policy, "human", "seeder")
    out = write(service, human, [new(f"s{i}", t) for i, t in enumerate(texts)])
    return [out.changes[f"s{i}"] for i in range(len(texts))]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _payload(token: str) -> dict[str, Any]:
    body = token.split(".")[1]
    loaded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    return loaded


# ----------------------------------------------------------------------- TOK-2


@pytest.mark.req("TOK-2")
def test_agent_change_without_token_is_token_invalid(
    service: Service, db: Database, agent: Binding
) -> None:
    token = observe(service, agent)
    with expect_error("TOKEN_INVALID", names="'bare'"):
        write(service, agent, [new("ok", "with token", token=token), new("bare", "without")])
    assert subject_counts(db, agent.subject) == (1, 0)  # only the Input record


@pytest.mark.req("TOK-2")
@pytest.mark.parametrize("kind", ["human", "input-adapter"])
def test_human_and_input_adapter_changes_may_omit_the_token(
    service: Service, subject: str, kind: Any
) -> None:
    binding = Binding(subject, "default", kind, "someone")
    out = write(service, binding, [new("a", f"written by {kind}")])
    assert out.changes["a"].rev == 1


# ----------------------------------------------------------------------- TOK-1


@pytest.mark.req("TOK-1", "TOK-3")
def test_token_is_opaque_bound_to_its_observer_and_valid_until_expiry(
    service: Service, db: Database, agent: Binding, clock: list[float]
) -> None:
    issued_at = clock[0]
    token = observe(service, agent)
    lifetime = service.settings.lifetimes.token_lifetime_s
    claims = open_sealed(service.secret, "input-token", token)
    assert token.startswith("gti1.")
    assert {k: claims[k] for k in ("sub", "pol", "ak", "aid", "gen", "exp")} == {
        "sub": agent.subject,
        "pol": agent.policy,
        "ak": "agent",
        "aid": agent.actor_id,
        "gen": agent.auth_generation,
        "exp": issued_at + lifetime,
    }
    clock[0] = issued_at + lifetime - 1
    assert write(service, agent, [new("a", "in time", token=token)]).changes["a"].rev == 1
    clock[0] = issued_at + lifetime
    before = subject_counts(db, agent.subject)
    with expect_error("TOKEN_INVALID", names="'late'") as caught:
        write(service, agent, [new("late", "too late", token=token)])
    assert "expired" in caught[0].message
    assert subject_counts(db, agent.subject) == before


# ----------------------------------------------------------------------- TOK-3


def _foreign(**changes: Any) -> Callable[[Service, Binding, str], str]:
    def make(service: Service, agent: Binding, _good: str) -> str:
        return observe(service, replace(agent, **changes))

    return make


def _resealed(kind: Any, prefix: str | None = None) -> Callable[[Service, Binding, str], str]:
    def make(service: Service, _agent: Binding, good: str) -> str:
        other = seal(service.secret, kind, _payload(good))
        if prefix is None:
            return other
        return prefix + other[other.index(".") :]

    return make


def _tampered(service: Service, _agent: Binding, good: str) -> str:
    prefix, _, mac = good.split(".")
    payload = _payload(good)
    payload["exp"] = payload["exp"] + 10**6
    body = _b64(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode())
    return f"{prefix}.{body}.{mac}"


def _forged(_service: Service, _agent: Binding, good: str) -> str:
    return seal(b"\x01" * 32, "input-token", _payload(good))


REJECTED: dict[str, Callable[[Service, Binding, str], str]] = {
    "arbitrary-string": lambda *_: "please let me write",
    "empty-parts": lambda *_: "gti1..",
    "truncated-mac": lambda _s, _a, good: good[:-4],
    "forged-with-another-secret": _forged,
    "tampered-payload": _tampered,
    "cursor-domain": _resealed("cursor"),
    "receipt-domain": _resealed("receipt"),
    "cursor-mac-relabelled-as-token": _resealed("cursor", prefix="gti1"),
    "other-subject": _foreign(subject="someone-else"),
    "other-policy": _foreign(policy="strict"),
    "other-actor-id": _foreign(actor_id="bot-2"),
    "other-actor-kind": _foreign(actor_kind="input-adapter"),
    "other-auth-generation": _foreign(auth_generation=2),
}


@pytest.mark.req("TOK-3", "TOK-1")
@pytest.mark.parametrize("case", sorted(REJECTED))
def test_token_rejection_cases_are_token_invalid(
    service: Service, db: Database, agent: Binding, case: str
) -> None:
    good = observe(service, agent)
    bad = REJECTED[case](service, agent, good)
    assert bad != good
    before = subject_counts(db, agent.subject)
    with expect_error("TOKEN_INVALID", names="'a'"):
        write(service, agent, [new("ok", "fine", token=good), new("a", "A", token=bad)])
    assert subject_counts(db, agent.subject) == before
    # The genuine token still works: the rejection is about the presented object.
    assert write(service, agent, [new("ok", "fine", token=good)]).changes["ok"].rev == 1


@pytest.mark.req("TOK-3")
def test_purged_token_is_token_invalid(service: Service, db: Database, agent: Binding) -> None:
    token = observe(service, agent)
    removed = cypher(
        db,
        "MATCH (i:Input {subject: $s, tokenId: $t}) DETACH DELETE i RETURN count(*) AS n",
        s=agent.subject,
        t=_tid(service, token),
    )
    assert removed == [{"n": 1}]
    with expect_error("TOKEN_INVALID", names="'a'") as caught:
        write(service, agent, [new("a", "A", token=token)])
    assert "purged" in caught[0].message
    assert subject_counts(db, agent.subject) == (0, 0)
    with expect_error("TOKEN_INVALID"):
        observe(service, agent, inherit=[token])


@pytest.mark.req("TOK-3")
def test_observe_rejects_invalid_or_expired_inherited_tokens(
    service: Service, db: Database, agent: Binding, clock: list[float]
) -> None:
    with expect_error("TOKEN_INVALID"):
        observe(service, agent, inherit=["not a token"])
    with expect_error("TOKEN_INVALID"):
        observe(service, agent, inherit=[observe(service, replace(agent, actor_id="bot-9"))])
    old = observe(service, agent)
    clock[0] += service.settings.lifetimes.token_lifetime_s
    with expect_error("TOKEN_INVALID", names="expired"):
        observe(service, agent, inherit=[old])
    inputs = cypher(
        db, "MATCH (i:Input {subject: $s, actorId: 'bot-1'}) RETURN count(i) AS n", s=agent.subject
    )
    assert inputs == [{"n": 1}]


# ------------------------------------------------------------ observe (TOK-4/5)


def _manifest(db: Database, subject: str, *views: AtomView) -> str:
    """A read manifest as the read path stores it: (:Manifest)-[:PRESENTS]->(:Revision)."""
    manifest_id = uuid.uuid4().hex
    cypher(
        db,
        "CREATE (m:Manifest {subject: $s, manifestId: $m}) WITH m "
        "UNWIND $refs AS x MATCH (r:Revision {subject: $s, atomId: x.atomId, rev: x.rev}) "
        "CREATE (m)-[:PRESENTS]->(r)",
        s=subject,
        m=manifest_id,
        refs=[ref(v) for v in views],
    )
    return manifest_id


@pytest.mark.req("TOK-4", "TOK-5")
def test_observe_records_everything_the_host_declared(
    service: Service, db: Database, agent: Binding
) -> None:
    s = agent.subject
    basis, watched, cited, shown = _seed(service, agent, "basis", "watched", "cited body", "shown")
    manifest = _manifest(db, s, shown)
    parent = observe(service, agent, basis=[ref(cited)])
    payload = digest_of("the final prompt")
    token = observe(
        service,
        agent,
        presentations=[manifest],
        sources=[
            {
                "uri": f"atom:{cited.atom_id}",
                "version": "1",
                "range": {"start": 0, "end": 5, "unit": "char"},
            },
            {"uri": "https://example.org/tool-result", "digest": digest_of("tool")},
        ],
        inherit=[parent],
        basis=[ref(basis)],
        watches=[ref(watched)],
        payloadDigest=payload,
    )
    row = cypher(
        db,
        "MATCH (i:Input {subject: $s, tokenId: $t}) "
        "RETURN i.payloadDigest AS payload, i.presentations AS presentations, "
        "i.actorKind AS kind, i.actorId AS actor, i.policy AS policy, "
        "[(i)-[:BASIS]->(r) | r.atomId + '@' + r.rev] AS basis, "
        "[(i)-[:WATCHES]->(r) | r.atomId + '@' + r.rev] AS watches, "
        "[(i)-[:PRESENTED]->(r) | r.atomId + '@' + r.rev] AS presented, "
        "[(i)-[:INHERITS]->(p) | p.tokenId] AS inherits, "
        "[(i)-[c:CITES]->(src) | [src.uri, src.version, c.start, c.end, c.unit, c.verified]] "
        "AS cites",
        s=s,
        t=_tid(service, token),
    )[0]
    assert row["payload"] == payload and row["presentations"] == [manifest]
    assert (row["kind"], row["actor"], row["policy"]) == ("agent", "bot-1", "default")
    assert row["basis"] == [f"{basis.atom_id}@1"]
    assert row["watches"] == [f"{watched.atom_id}@1"]
    assert row["presented"] == [f"{shown.atom_id}@1"]
    assert row["inherits"] == [_tid(service, parent)]
    assert sorted(row["cites"], key=str) == sorted(
        [
            [f"atom:{cited.atom_id}", "1", 0, 5, "char", True],
            ["https://example.org/tool-result", None, None, None, None, False],
        ],
        key=str,
    )


@pytest.mark.req("TOK-5", "WR-7")
def test_observe_refuses_inputs_that_do_not_exist_in_this_subject(
    service: Service, db: Database, agent: Binding
) -> None:
    (mine,) = _seed(service, agent, "short")
    other = Binding(f"o-{uuid.uuid4().hex[:8]}", "default", "human", "x")
    (theirs,) = _seed(service, other, "theirs")
    for kwargs in (
        {"basis": [ref(theirs)]},
        {"watches": [ref(mine.atom_id, 2)]},
        {"presentations": [uuid.uuid4().hex]},
        {"sources": [{"uri": f"atom:{theirs.atom_id}", "version": "1"}]},
    ):
        with expect_error("DEPENDENCY_INVALID"):
            observe(service, agent, **kwargs)
    with expect_error("INVALID_INPUT"):
        observe(
            service,
            agent,
            sources=[
                {
                    "uri": f"atom:{mine.atom_id}",
                    "version": "1",
                    "range": {"start": 0, "end": 6, "unit": "char"},
                }
            ],
        )
    with expect_error("INVALID_INPUT"):
        observe(service, agent, payloadDigest="md5:abc")
    assert cypher(db, "MATCH (i:Input {subject: $s}) RETURN count(i) AS n", s=agent.subject) == [
        {"n": 0}
    ]


def _dependencies(db: Database, subject: str, view: AtomView) -> set[str]:
    """Everything a revision's provenance reaches: its token's inputs (inherited too)
    and its own citations, as ``kind:target`` strings."""
    rows = cypher(
        db,
        "MATCH (r:Revision {subject: $s, atomId: $a, rev: $rev}) "
        "CALL (r) { MATCH (r)-[:CITES]->(src) RETURN 'cites:' + src.uri AS dep "
        "UNION MATCH (r)-[:GENERATED_FROM]->(:Input)-[:INHERITS*0..]->(i:Input) "
        "MATCH (i)-[e:BASIS|PRESENTED|WATCHES|CITES]->(x) "
        "RETURN toLower(type(e)) + ':' + coalesce(x.uri, x.atomId + '@' + x.rev) AS dep } "
        "RETURN collect(DISTINCT dep) AS deps",
        s=subject,
        a=view.atom_id,
        rev=view.rev,
    )
    return set(rows[0]["deps"])


@pytest.mark.req("TOK-7", "TOK-5")
def test_written_revision_depends_on_its_tokens_inputs_plus_its_own_sources(
    service: Service, db: Database, agent: Binding
) -> None:
    s = agent.subject
    x, y, z = _seed(service, agent, "x", "y", "z")
    parent = observe(service, agent, basis=[ref(x)])
    token = observe(
        service,
        agent,
        inherit=[parent],
        basis=[ref(y)],
        sources=[{"uri": "https://example.org/declared"}],
    )
    out = write(
        service,
        agent,
        [
            new("cites", "A", sources=[{"uri": f"atom:{z.atom_id}", "version": "1"}], token=token),
            new("silent", "B", sources=[], token=token),
        ],
    )
    token_inputs = {
        f"basis:{x.atom_id}@1",
        f"basis:{y.atom_id}@1",
        "cites:https://example.org/declared",
    }
    assert _dependencies(db, s, out.changes["cites"]) == token_inputs | {f"cites:atom:{z.atom_id}"}
    # Empty explicit sources cannot narrow what the token declared (TOK-7).
    assert _dependencies(db, s, out.changes["silent"]) == token_inputs


@pytest.mark.req("TOK-5")
def test_independent_tokens_stay_separate_and_a_combined_token_depends_on_both(
    service: Service, db: Database, agent: Binding
) -> None:
    s = agent.subject
    x, y = _seed(service, agent, "x", "y")
    token_a = observe(service, agent, basis=[ref(x)])
    token_b = observe(service, agent, basis=[ref(y)])
    out = write(
        service,
        agent,
        [new("a", "from A", token=token_a), new("b", "from B", token=token_b)],
    )
    assert _dependencies(db, s, out.changes["a"]) == {f"basis:{x.atom_id}@1"}
    assert _dependencies(db, s, out.changes["b"]) == {f"basis:{y.atom_id}@1"}
    both = observe(service, agent, inherit=[token_a, token_b])
    c = write(service, agent, [new("c", "from A+B", token=both)]).changes["c"]
    assert _dependencies(db, s, c) == {f"basis:{x.atom_id}@1", f"basis:{y.atom_id}@1"}


@pytest.mark.req("TOK-6")
def test_operation_records_every_input_of_its_batch(
    service: Service, db: Database, agent: Binding
) -> None:
    x, y = _seed(service, agent, "x", "y")
    token_a = observe(service, agent, basis=[ref(x)])
    token_b = observe(service, agent, basis=[ref(y)])
    out = write(
        service,
        agent,
        [new("a", "from A", token=token_a), new("b", "from B", token=token_b)],
    )
    # The conservative reading of a token-less change (TOK-6) is: it depends on
    # every input its batch used. The store records exactly that set per batch.
    rows = cypher(
        db,
        "MATCH (r:Revision {subject: $s})-[:WRITTEN_BY]->(o:Operation {operationId: $op}) "
        "RETURN r.atomId AS atomId, [(o)-[:USED_INPUT]->(i) | i.tokenId] AS inputs",
        s=agent.subject,
        op=out.operation_id,
    )
    expected = {_tid(service, token_a), _tid(service, token_b)}
    assert len(rows) == 2 and all(set(r["inputs"]) == expected for r in rows)
