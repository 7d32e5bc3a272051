"""Atomisation end to end on a real Neo4j (SPEC §11 ATM-1 … ATM-10, §12 SIG-1/SIG-2).

The rule curator is real; the LLM curator talks to a loopback server that answers
like Ollama (the only stand-in). Probes read Neo4j directly, so the tests check what
is stored, not only what the service says.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import uuid
from typing import Any

import pytest
from atomise_support import (
    LEVEL,
    SENTENCES,
    THREE_SENTENCES,
    answer,
    atoms_answer,
    create,
    cypher,
    fake_ollama,
    footprint,
    service_with,
)
from listener_support import CountingPort
from neo4j.exceptions import ServiceUnavailable

from graphsvc.api.context import Context
from graphsvc.api.schema import build_schema
from graphsvc.atomise.policy import after_write
from graphsvc.atomise.usecase import (
    EVENT_ATOMISATION_COMPLETE,
    AtomiseHooks,
    event_from_row,
    payload_sha256,
)
from graphsvc.atomise.worker import worker_for
from graphsvc.core.binding import Binding
from graphsvc.core.requests import SearchRequest
from graphsvc.core.signing import GENESIS_PREV_HASH, SignableLink, verify_chain, verify_link
from graphsvc.core.write_models import AtomRef
from graphsvc.errors import (
    DepthExceededError,
    GovernanceRefusedError,
    GraphsvcError,
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    TierLockedError,
)
from graphsvc.forensics.bundle import verify_bundle_bytes
from graphsvc.keys.auth import AuthTable
from graphsvc.keys.signing_keys import KeyRing
from graphsvc.runtime import service_for
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.store.connection import Database
from graphsvc.store.views import load_views

BUDGET = 50  # with THREE_SENTENCES the rule curator makes exactly three atoms


@pytest.fixture(scope="module")
def rule(service: Service) -> Service:
    """The session service with the deterministic rule curator configured."""
    return service_with(service, curator="rule")


def head_of(db: Database, subject: str, atom_id: str) -> dict[str, Any]:
    rows = cypher(
        db,
        "MATCH (a:Atom {subject: $s, atomId: $a})-[:HEAD]->(h:Revision) "
        "RETURN h.rev AS rev, h.state AS state, h.text AS text, h.sources AS sources, "
        "h.atomisedInto AS atomisedInto, h.archivedAt AS archivedAt, h.atomIds AS atomIds, "
        "h:Current AS current, h.embedding IS NOT NULL AS embedded, "
        "h.operationId AS operationId, a.state AS atomState",
        s=subject,
        a=atom_id,
    )
    return rows[0]


def events_of(db: Database, subject: str) -> list[dict[str, Any]]:
    return cypher(
        db,
        "MATCH (e:SignedEvent {subject: $s}) RETURN e.sequence AS sequence, "
        "e.prevHash AS prevHash, e.type AS type, e.payload AS payload, "
        "e.signedAt AS signedAt, e.keyId AS keyId, e.signature AS signature, e.hash AS hash "
        "ORDER BY e.sequence",
        s=subject,
    )


def ring_of(service: Service) -> KeyRing:
    return service.signing_keys()


# =========================================================================== flow


@pytest.mark.req("ATM-1", "ATM-2", "ATM-3", "SIG-1", "SIG-2", "TOK-2", "TOK-5")
def test_atomise_writes_signed_atoms_one_event_and_archives_by_new_revision(
    rule: Service, db: Database, human: Binding, agent: Binding, subject: str
) -> None:
    other = create(rule, human, "A neighbouring note about disk alerts.")
    source = {"uri": "https://example.org/postmortem/42", "version": "3"}
    parent = create(
        rule,
        human,
        THREE_SENTENCES,
        links=[{"role": "see-also", "target": {"ref": {"atomId": other.atom_id, "rev": 1}}}],
        sources=[source],
    )
    calls: list[tuple[str, int]] = []

    def rec(name: str) -> Any:
        return lambda index, text: calls.append((name, index))

    hooks = AtomiseHooks(rec("pre_store"), rec("post_store"), rec("pre_link"), rec("post_link"))
    # An agent atomises: its atoms carry the observe token (TOK-2) and its actor.
    outcome = rule.atomise(agent, parent.atom_id, max_atom_tokens=BUDGET, hooks=hooks)

    assert outcome.atom_count == 3 and not outcome.informational
    assert outcome.source_rev == 1 and outcome.archive_rev == 2
    assert outcome.to_json().keys() >= {"sourceId", "atomIds", "atomCount", "archivedAt"}
    assert calls == [("pre_store", i) for i in range(3)] + [
        (name, i) for i in range(3) for name in ("post_store", "pre_link", "post_link")
    ]

    # Atoms: structural atomOf, first revision current with an embedding, agent actor.
    atoms = cypher(
        db,
        "MATCH (a:Atom {subject: $s, atomOf: $p})-[:HEAD]->(r:Revision) "
        "RETURN a.atomId AS atomId, r.rev AS rev, r.text AS text, r.atomOf AS atomOf, "
        "r.state AS state, r:Current AS current, size(r.embedding) AS dims, "
        "r.actorKind AS actorKind, r.operationId AS operationId ORDER BY a.atomIndex",
        s=subject,
        p=parent.atom_id,
    )
    assert [a["atomId"] for a in atoms] == list(outcome.atom_ids)
    assert [a["text"] for a in atoms] == list(SENTENCES)
    for a in atoms:
        assert (a["rev"], a["state"], a["current"], a["dims"]) == (1, "active", True, 384)
        assert a["atomOf"] == parent.atom_id and a["actorKind"] == "agent"

    # Parent: archived by a NEW revision carrying the same body, sources and links.
    head = head_of(db, subject, parent.atom_id)
    assert head["rev"] == 2 and head["state"] == "archived" and head["atomState"] == "archived"
    assert head["atomisedInto"] == 3 and head["archivedAt"] == outcome.archived_at
    assert head["atomIds"] == list(outcome.atom_ids) and head["text"] == THREE_SENTENCES
    assert head["current"] and head["embedded"]  # includeArchived can still find it
    views = load_views(db, subject, [AtomRef(parent.atom_id, 1), AtomRef(parent.atom_id, 2)])
    old, new = views[AtomRef(parent.atom_id, 1)], views[AtomRef(parent.atom_id, 2)]
    assert old.state == "active" and old.atomised_into is None and old.text == THREE_SENTENCES
    assert new.links == old.links and new.sources == old.sources and new.text == old.text
    assert {a["operationId"] for a in atoms} == {head["operationId"]}  # one transaction
    superseded = cypher(
        db,
        "MATCH (n:Revision {subject: $s, atomId: $a, rev: 2})-[:SUPERSEDES]->"
        "(o:Revision {rev: 1}) RETURN o:Current AS current",
        s=subject,
        a=parent.atom_id,
    )
    assert superseded == [{"current": False}]

    # Generation input: observe of the parent revision and its sources (TOK-5).
    inputs = cypher(
        db,
        "MATCH (r:Revision {subject: $s, rev: 1})-[:GENERATED_FROM]->(i:Input) "
        "WHERE r.atomId IN $ids "
        "MATCH (i)-[:BASIS]->(b:Revision) OPTIONAL MATCH (i)-[:CITES]->(src:Source) "
        "RETURN DISTINCT i.tokenId AS token, i.payloadDigest AS digest, b.atomId AS basis, "
        "b.rev AS basisRev, collect(DISTINCT src.uri) AS uris, count(DISTINCT r) AS atoms",
        s=subject,
        ids=list(outcome.atom_ids),
    )
    assert len(inputs) == 1
    assert inputs[0]["basis"] == parent.atom_id and inputs[0]["basisRev"] == 1
    assert inputs[0]["digest"] == payload_sha256(SENTENCES)
    assert inputs[0]["uris"] == [source["uri"]] and inputs[0]["atoms"] == 3

    # Signed derives_from edges verify with the deployment's public key (SIG-1).
    ring = ring_of(rule)
    edges = cypher(
        db,
        "MATCH (c:Revision {subject: $s})-[d:DERIVES_FROM]->(p:Revision) "
        "RETURN c.atomId AS child, c.rev AS crev, p.atomId AS parent, p.rev AS prev, "
        "d.signature AS sig, d.keyId AS kid, d.signedAt AS at",
        s=subject,
    )
    assert sorted(e["child"] for e in edges) == sorted(outcome.atom_ids)
    for e in edges:
        assert (e["parent"], e["prev"], e["crev"]) == (parent.atom_id, 1, 1)
        link = SignableLink(subject, e["child"], 1, e["parent"], 1, e["at"], e["kid"])
        assert verify_link(ring.public_keys()[e["kid"]], link, e["sig"])
        forged = SignableLink(subject, e["child"], 1, e["parent"], 2, e["at"], e["kid"])
        assert not verify_link(ring.public_keys()[e["kid"]], forged, e["sig"])
    # Lineage is not an ordinary link: no role entered the link graph (WR-9).
    assert cypher(
        db,
        "MATCH (r:Revision {subject: $s})-[l:LINK]->() WHERE r.atomId IN $ids RETURN count(l) AS n",
        s=subject,
        ids=list(outcome.atom_ids),
    ) == [{"n": 0}]

    # Exactly one atomisation_complete event, first of the subject's chain (SIG-2).
    rows = events_of(db, subject)
    assert len(rows) == 1
    event = event_from_row(subject, rows[0])
    assert event.type == EVENT_ATOMISATION_COMPLETE and event.sequence == 1
    assert event.prev_hash == GENESIS_PREV_HASH
    assert event.payload["atomIds"] == list(outcome.atom_ids)
    assert event.payload["sourceId"] == parent.atom_id and event.payload["archiveRev"] == 2
    assert verify_chain([event], ring.public_keys()) == []
    assert rows[0]["payload"] == json.dumps(
        event.payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )

    # lineage (API-5): the parent, its atoms and the linked neighbour.
    graph = rule.lineage(human, parent.atom_id).to_json()
    kinds = {n["id"]: n["kind"] for n in graph["nodes"]}
    assert kinds[parent.atom_id] == "root" and kinds[other.atom_id] == "neighbour"
    assert all(kinds[a] == "lineage" for a in outcome.atom_ids)
    derives = [e for e in graph["edges"] if e["type"] == "derives_from"]
    assert sorted(e["source"] for e in derives) == sorted(outcome.atom_ids)
    assert {"source": parent.atom_id, "target": other.atom_id, "type": "link",
            "role": "see-also", "at": "observed"} in graph["edges"]  # fmt: skip
    from_atom = rule.lineage(human, outcome.atom_ids[0], depth=1).to_json()
    lineage_ids = {n["id"] for n in from_atom["nodes"] if n["kind"] != "neighbour"}
    assert lineage_ids == {outcome.atom_ids[0], parent.atom_id}  # atom -> parent


@pytest.mark.req("ATM-2")
@pytest.mark.parametrize(("hook", "index"), [("pre_store", 0), ("post_link", 2)])
def test_governance_refusal_names_the_atom_and_commits_nothing(
    rule: Service, db: Database, human: Binding, subject: str, hook: str, index: int
) -> None:
    parent = create(rule, human, THREE_SENTENCES)
    before = footprint(db, subject)

    def refuse(i: int, text: str) -> None:
        if i == index:
            raise GovernanceRefusedError(f"policy forbids {text[:12]!r}")

    with pytest.raises(GovernanceRefusedError) as info:
        rule.atomise(
            human, parent.atom_id, max_atom_tokens=BUDGET, hooks=AtomiseHooks(**{hook: refuse})
        )
    assert f"atom {index}" in info.value.message and hook in info.value.message
    assert info.value.details["atomIndex"] == index
    assert footprint(db, subject) == before  # not one node or relationship more
    head = head_of(db, subject, parent.atom_id)
    assert (head["rev"], head["state"]) == (1, "active")
    assert events_of(db, subject) == []


@pytest.mark.req("ATM-4")
def test_keyword_tier_is_tier_locked_before_any_database_read(service: Service) -> None:
    port = CountingPort()  # the "database": a port that counts connections, no Neo4j
    closed = Database(port.uri, "neo4j", "", "neo4j")
    try:
        keyword = service_for(
            service.settings.with_(curator="none"), closed, service.embedder, service.tokenizer
        )
        with pytest.raises(GraphsvcError) as info:
            keyword.atomise(Binding("s", "default", "human", "x"), "any-atom")
        assert info.value.code == "TIER_LOCKED" and isinstance(info.value, TierLockedError)
        # Refused before the driver opened one connection (no read was tried).
        assert port.connections == 0
        # The control: a read through this Database does reach the port (and fails).
        with pytest.raises(ServiceUnavailable):
            closed.driver.verify_connectivity()
        assert port.connections >= 1
    finally:
        closed.close()
        port.close()


# =========================================================================== budgets


@pytest.mark.req("ATM-5")
def test_source_within_one_atom_budget_is_source_too_small_and_writes_nothing(
    rule: Service, db: Database, human: Binding, subject: str
) -> None:
    short = create(rule, human, SENTENCES[0])
    before = footprint(db, subject)
    outcome = rule.atomise(human, short.atom_id, max_atom_tokens=BUDGET)
    assert outcome.reason == "source_too_small" and outcome.informational
    assert outcome.atom_ids == () and outcome.to_json()["informational"] == "source_too_small"
    assert footprint(db, subject) == before
    for bad in (49, 1001):
        with pytest.raises(InvalidInputError):
            rule.atomise(human, short.atom_id, max_atom_tokens=bad)
    with pytest.raises(NotFoundError):
        rule.atomise(human, uuid.uuid4().hex)


HUGE = " ".join(["The archive retention window is ninety days for audit logs."] * 8)


@pytest.mark.req("ATM-5", "ATM-3")
def test_llm_atoms_are_budgeted_dropped_and_cut_to_ten(
    service: Service, human: Binding, db: Database, subject: str
) -> None:
    parent = create(service, human, THREE_SENTENCES)
    shorts = [f"Audit fact number {i} is recorded." for i in range(11)]
    with fake_ollama(atoms_answer([LEVEL[0], *shorts, HUGE])) as fake:
        llm = service_with(service, curator="ollama", ollama_url=fake.base_url)
        outcome = llm.atomise(human, parent.atom_id, max_atom_tokens=BUDGET)
    assert len(fake.bodies) == 1 and fake.paths == ["/api/generate"]
    assert outcome.atom_count == 10  # 12 survivors cut to 10
    assert outcome.dropped_count == 1 and outcome.truncated_count == 2
    assert len(outcome.warnings) == 1 and "over the budget" in outcome.warnings[0]
    texts = cypher(
        db,
        "MATCH (a:Atom {subject: $s, atomOf: $p})-[:HEAD]->(r) RETURN r.text AS t "
        "ORDER BY a.atomIndex",
        s=subject,
        p=parent.atom_id,
    )
    assert [r["t"] for r in texts] == [LEVEL[0], *shorts[:9]]

    other = create(service, human, THREE_SENTENCES)
    with fake_ollama(atoms_answer([shorts[0], HUGE])) as fake:
        llm = service_with(service, curator="ollama", ollama_url=fake.base_url)
        small = llm.atomise(human, other.atom_id, max_atom_tokens=BUDGET)
    assert small.reason == "source_too_small" and small.dropped_count == 1
    assert head_of(db, subject, other.atom_id)["state"] == "active"


@pytest.mark.req("ATM-5")
def test_atomising_an_atom_nested_three_deep_is_depth_exceeded(
    service: Service, human: Binding
) -> None:
    # Every answer is two atoms a little over 50 tokens, so each atom can be split again.
    with fake_ollama(atoms_answer(LEVEL)) as fake:
        llm = service_with(service, curator="ollama", ollama_url=fake.base_url)
        current = create(llm, human, " ".join(LEVEL)).atom_id
        for _ in range(3):
            current = llm.atomise(human, current, max_atom_tokens=BUDGET).atom_ids[0]
        with pytest.raises(DepthExceededError) as info:
            llm.atomise(human, current, max_atom_tokens=BUDGET)
    assert info.value.details == {"depth": 3, "maxDepth": 3}
    assert len(fake.bodies) == 3  # refused before the curator was asked


# =========================================================================== re-atomise


@pytest.mark.req("ATM-10", "ATM-8", "SIG-2")
def test_already_atomised_is_informational_and_force_keeps_old_atoms(
    rule: Service, db: Database, human: Binding, subject: str
) -> None:
    parent = create(rule, human, THREE_SENTENCES)
    first = rule.atomise(human, parent.atom_id, max_atom_tokens=BUDGET)
    again = rule.atomise(human, parent.atom_id, max_atom_tokens=BUDGET)
    assert again.already_atomised and again.atom_ids == first.atom_ids
    assert again.to_json()["alreadyAtomised"] is True
    assert len(events_of(db, subject)) == 1

    forced = rule.atomise(human, parent.atom_id, max_atom_tokens=BUDGET, force=True)
    assert not set(forced.atom_ids) & set(first.atom_ids)
    assert forced.source_rev == 2 and forced.archive_rev == 3  # from the archived head
    head = head_of(db, subject, parent.atom_id)
    assert (head["rev"], head["state"], head["atomisedInto"]) == (3, "archived", 3)
    assert head["atomIds"] == list(forced.atom_ids) and head["text"] == THREE_SENTENCES
    kept = load_views(db, subject, [AtomRef(a, 1) for a in first.atom_ids])
    assert all(v.head and v.state == "active" for v in kept.values()) and len(kept) == 3
    derived_from = cypher(
        db,
        "MATCH (c:Revision {subject: $s})-[:DERIVES_FROM]->(p:Revision) "
        "WHERE c.atomId IN $ids RETURN DISTINCT p.rev AS rev",
        s=subject,
        ids=list(forced.atom_ids),
    )
    assert derived_from == [{"rev": 2}]
    events = [event_from_row(subject, r) for r in events_of(db, subject)]
    assert [e.sequence for e in events] == [1, 2]
    assert verify_chain(events, ring_of(rule).public_keys()) == []


@pytest.mark.req("SIG-2")
def test_concurrent_atomisations_append_one_unbroken_chain(
    rule: Service, db: Database, human: Binding, subject: str
) -> None:
    parents = [create(rule, human, THREE_SENTENCES).atom_id for _ in range(2)]
    errors: list[BaseException] = []

    def run(atom_id: str) -> None:
        try:
            rule.atomise(human, atom_id, max_atom_tokens=BUDGET)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(p,)) for p in parents]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    events = [event_from_row(subject, r) for r in events_of(db, subject)]
    assert [e.sequence for e in events] == [1, 2]
    assert {e.payload["sourceId"] for e in events} == set(parents)
    assert verify_chain(events, ring_of(rule).public_keys()) == []


@pytest.mark.req("LNK-5", "TOK-5", "SIG-2")
def test_purging_the_parent_purges_its_atoms_and_the_chain_still_verifies(
    rule: Service, db: Database, human: Binding, subject: str
) -> None:
    parent = create(rule, human, THREE_SENTENCES)
    outcome = rule.atomise(human, parent.atom_id, max_atom_tokens=BUDGET)
    rule.purge(human, parent.atom_id)
    left = cypher(
        db,
        "MATCH (a:Atom {subject: $s}) WHERE a.atomId IN $ids RETURN count(a) AS n",
        s=subject,
        ids=[parent.atom_id, *outcome.atom_ids],
    )
    assert left == [{"n": 0}]
    events = [event_from_row(subject, r) for r in events_of(db, subject)]
    assert len(events) == 1
    assert verify_chain(events, ring_of(rule).public_keys()) == []


# =========================================================================== recall


def _hit_ids(service: Service, binding: Binding, query: str, include_archived: bool) -> set[str]:
    result = service.search(
        binding, SearchRequest(query, limit=50, include_archived=include_archived)
    )
    return {h.atom.atom_id for h in result.hits}


@pytest.mark.req("ATM-6")
def test_recall_hides_an_atomised_parent_only_when_both_signals_are_set(
    rule: Service, db: Database, human: Binding, subject: str
) -> None:
    parent = create(rule, human, THREE_SENTENCES)
    outcome = rule.atomise(human, parent.atom_id, max_atom_tokens=BUDGET)
    query = "ingest worker zephyr crashed scratch disk"
    default = _hit_ids(rule, human, query, include_archived=False)
    assert parent.atom_id not in default and outcome.atom_ids[0] in default
    assert parent.atom_id in _hit_ids(rule, human, query, include_archived=True)

    # A half-state row (imported, or a crashed worker): atomisedInto without archivedAt.
    half = create(rule, human, "Quarterly quokka census results for the island reserve.")
    cypher(
        db,
        "MATCH (:Atom {subject: $s, atomId: $a})-[:HEAD]->(h) SET h.atomisedInto = 2",
        s=subject,
        a=half.atom_id,
    )
    quokka = "quokka census island reserve"
    assert half.atom_id in _hit_ids(rule, human, quokka, include_archived=False)
    cypher(
        db,
        "MATCH (:Atom {subject: $s, atomId: $a})-[:HEAD]->(h) SET h.archivedAt = $t",
        s=subject,
        a=half.atom_id,
        t="2025-01-01T00:00:00Z",
    )
    assert half.atom_id not in _hit_ids(rule, human, quokka, include_archived=False)
    assert half.atom_id in _hit_ids(rule, human, quokka, include_archived=True)


# =========================================================================== policy


@pytest.mark.req("ATM-8", "ATM-9")
def test_namespace_policy_is_off_by_default_and_validated(
    rule: Service, human: Binding, agent: Binding
) -> None:
    plain = create(rule, human, THREE_SENTENCES)
    assert plain.state == "active"  # no policy: nothing happened to a long write
    with pytest.raises(PermissionDeniedError):
        rule.set_namespace_policy(agent, {"auto_atomise": True})
    for bad in (
        {"auto_atomise_mode": "sometimes"},
        {"auto_atomise_max_atom_tokens": 20},
        {"auto_atomize": True},
    ):
        with pytest.raises(InvalidInputError):
            rule.set_namespace_policy(human, bad)
    legacy = rule.set_namespace_policy(human, {"governance": {"auto_atomise": True}})
    assert legacy.mode == "deferred" and legacy.auto_atomise_threshold_cl100k == 500
    assert legacy.to_json()["resolvedMode"] == "deferred"
    explicit = rule.set_namespace_policy(human, {"auto_atomise_mode": "synchronous"})
    assert explicit.to_json()["resolvedMode"] == "synchronous"
    off = rule.set_namespace_policy(human, {})
    assert off.to_json()["resolvedMode"] is None


@pytest.mark.req("ATM-9", "ATM-8")
def test_synchronous_policy_atomises_inside_the_write(
    rule: Service, db: Database, human: Binding, subject: str
) -> None:
    rule.set_namespace_policy(
        human,
        {
            "auto_atomise_mode": "synchronous",
            "auto_atomise_threshold_cl100k": 40,
            "auto_atomise_max_atom_tokens": BUDGET,
        },
    )
    from graphsvc.inputs.models import parse_changes

    change = {"id": "a", "op": "create", "content": {"text": THREE_SENTENCES, "links": []}}
    outcome = rule.write(human, parse_changes([{**change, "sources": []}]))
    assert outcome.extra["atomiseMode"] == "synchronous"
    assert outcome.extra["atomiseOutcome"] == "atomised"
    assert outcome.to_json()["atomiseOutcome"] == "atomised"
    view = outcome.changes["a"]
    assert view.rev == 1 and not view.head  # archived before the response returned
    head = head_of(db, subject, view.atom_id)
    assert head["state"] == "archived" and head["atomisedInto"] == 3
    # ATM-9: the source's own embedding was skipped; its atoms carry embeddings.
    rows = cypher(
        db,
        "MATCH (r:Revision {subject: $s, atomId: $a}) "
        "RETURN r.rev AS rev, r.embedding IS NULL AS missing ORDER BY rev",
        s=subject,
        a=view.atom_id,
    )
    assert [r["missing"] for r in rows] == [True, True]
    atom_rows = cypher(
        db,
        "MATCH (r:Revision:Current {subject: $s}) WHERE r.atomOf = $a "
        "RETURN r.embedding IS NOT NULL AS has",
        s=subject,
        a=view.atom_id,
    )
    assert len(atom_rows) == 3 and all(r["has"] for r in atom_rows)

    short = create(rule, human, "A short note stays as it is.")
    assert short.head and short.state == "active"
    replay = rule.write(human, parse_changes([{**change, "sources": []}]), "key-1")
    repeated = rule.write(human, parse_changes([{**change, "sources": []}]), "key-1")
    assert replay.extra and repeated.repeated and repeated.extra is None


@pytest.mark.req("ATM-7", "ATM-9")
def test_synchronous_failure_reports_failed_and_uses_the_namespace_retry_budget(
    service: Service, db: Database, human: Binding, subject: str
) -> None:
    policy: dict[str, Any] = {
        "auto_atomise_mode": "synchronous",
        "auto_atomise_threshold_cl100k": 40,
        "auto_atomise_max_atom_tokens": BUDGET,
    }
    with fake_ollama() as fake:  # always malformed
        llm = service_with(service, curator="ollama", ollama_url=fake.base_url)
        llm.set_namespace_policy(human, policy)
        written = create(llm, human, THREE_SENTENCES)
        assert len(fake.bodies) == 2  # default: 1 retry
        assert head_of(db, subject, written.atom_id)["state"] == "active"  # write kept
        # The deferred embedding was made after all: the kept head is searchable.
        emb = cypher(
            db,
            "MATCH (r:Revision:Current {subject: $s, atomId: $a}) "
            "RETURN r.embedding IS NOT NULL AS has",
            s=subject,
            a=written.atom_id,
        )
        assert emb == [{"has": True}]

        llm.set_namespace_policy(human, {**policy, "auto_atomise_max_retries": 0})
        fake.bodies.clear()
        from graphsvc.inputs.models import parse_changes

        change = {"id": "a", "op": "create", "content": {"text": THREE_SENTENCES, "links": []}}
        outcome = llm.write(human, parse_changes([{**change, "sources": []}]))
        assert len(fake.bodies) == 1
    assert outcome.extra == {
        "atomiseMode": "synchronous",
        "atomiseOutcome": "failed",
        "atomiseDetails": {
            "a": {
                "outcome": "failed",
                "error": "CURATOR_FAILED",
                "message": outcome.extra["atomiseDetails"]["a"]["message"],
            }
        },
    }


@pytest.mark.req("ATM-8", "ATM-9")
def test_deferred_policy_returns_at_once_and_the_worker_atomises(
    rule: Service, db: Database, human: Binding, subject: str
) -> None:
    rule.set_namespace_policy(
        human,
        {
            "auto_atomise": True,
            "auto_atomise_threshold_cl100k": 40,
            "auto_atomise_max_atom_tokens": BUDGET,
        },
    )
    from graphsvc.inputs.models import parse_changes

    change = {"id": "a", "op": "create", "content": {"text": THREE_SENTENCES, "links": []}}
    outcome = rule.write(human, parse_changes([{**change, "sources": []}]))
    assert outcome.extra == {"atomiseMode": "deferred"}
    assert outcome.changes["a"].rev == 1
    worker = worker_for(rule)
    assert worker.wait_idle(timeout=90)
    head = head_of(db, subject, outcome.changes["a"].atom_id)
    assert head["state"] == "archived" and head["atomisedInto"] == 3
    assert any(r.atom_id == outcome.changes["a"].atom_id and r.outcome == "atomised"
               for r in worker.results)  # fmt: skip


@pytest.mark.req("ATM-7", "ATM-9")
def test_deferred_failure_is_logged_not_raised_and_always_gets_three_retries(
    service: Service, db: Database, human: Binding, subject: str, caplog: Any
) -> None:
    with fake_ollama() as fake:  # always malformed
        llm = service_with(service, curator="ollama", ollama_url=fake.base_url)
        llm.set_namespace_policy(
            human,
            {
                "auto_atomise": True,
                "auto_atomise_threshold_cl100k": 40,
                "auto_atomise_max_atom_tokens": BUDGET,
                "auto_atomise_max_retries": 0,  # ignored by deferred mode
            },
        )
        written = create(llm, human, THREE_SENTENCES)
        worker = worker_for(llm)
        assert worker.wait_idle(timeout=60)
        assert len(fake.bodies) == 4  # 3 retries = 4 attempts
    assert worker.failed == 1 and worker.results[-1].detail == "CURATOR_FAILED"
    assert head_of(db, subject, written.atom_id)["state"] == "active"
    assert any("CURATOR_FAILED" in r.getMessage() for r in caplog.records)


def test_after_write_never_fails_a_committed_write(rule: Service, human: Binding) -> None:
    view = create(rule, human, "Committed.")
    broken = service_with(rule)
    broken.db = None  # type: ignore[assignment]  # any policy read now fails
    from graphsvc.ops.write import WriteOutcome

    outcome = WriteOutcome("op", False, "complete", {"a": view})
    deps = broken.atomise_deps()
    assert after_write(deps, human, outcome, submit=worker_for(broken).submit) is outcome


# =========================================================================== LLM, API


@pytest.mark.req("ATM-3")
def test_llm_curator_through_the_service_against_an_ollama_like_server(
    service: Service, db: Database, human: Binding, subject: str
) -> None:
    parent = create(service, human, THREE_SENTENCES)
    fenced = (
        "Sure, here they are:\n```json\n"
        + json.dumps({"atoms": [{"text": SENTENCES[0]}, {"text": " ".join(SENTENCES[1:])}]})
        + "\n```\nAnything else?"
    )
    with fake_ollama(answer(fenced)) as fake:
        llm = service_with(service, curator="ollama", ollama_url=fake.base_url)
        outcome = llm.atomise(human, parent.atom_id, max_atom_tokens=BUDGET)
    assert outcome.atom_count == 2
    body = fake.bodies[0]
    assert body["model"] == llm.settings.atomise.ollama_model and body["stream"] is False
    assert "2 ≤ N ≤ 10" in body["system"] and THREE_SENTENCES in body["prompt"]
    event = event_from_row(subject, events_of(db, subject)[0])
    assert event.payload["curator"] == "ollama"


def _gql(svc: Service, binding: Binding, query: str, **variables: Any) -> dict[str, Any]:
    auth = AuthTable({})
    token = uuid.uuid4().hex
    auth.add(token, binding)
    context = Context(service=svc, auth=auth, authorization=f"Bearer {token}")
    schema = build_schema(svc.settings)
    result = asyncio.run(schema.execute(query, variable_values=variables, context_value=context))
    assert result.errors is None, result.errors
    assert result.data is not None
    return result.data


UTC_Z = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def _instants_leave_with_z(rule: Service, human: Binding, atom_id: str, done: Any) -> None:
    """GraphQL's instants, in JSON answers (the atomise outcome) and typed fields
    alike, are UTC with six fraction digits and Z; one given back is taken."""
    assert UTC_Z.fullmatch(done["archivedAt"]), done
    q = """query($id: ID!) {
      atom(atomId: $id) { createdAt head { createdAt archivedAt } }
      lineageGraph(atomId: $id) { nodes { archivedAt } edges { kind signedAt } }
    }"""
    data = _gql(rule, human, q, id=atom_id)
    head = data["atom"]["head"]
    assert head["archivedAt"] == done["archivedAt"]
    signed = [e["signedAt"] for e in data["lineageGraph"]["edges"] if e["kind"] == "DERIVES_FROM"]
    archived = [n["archivedAt"] for n in data["lineageGraph"]["nodes"] if n["archivedAt"]]
    stamps = [data["atom"]["createdAt"], head["createdAt"], *signed, *archived]
    assert len(signed) == len(done["atomIds"]) and archived, data
    assert all(UTC_Z.fullmatch(t) for t in stamps), stamps
    q = "query($id: ID!, $t: DateTime) { atom(atomId: $id, asOf: $t) { head { rev } } }"
    then = _gql(rule, human, q, id=atom_id, t=data["atom"]["createdAt"])
    assert then["atom"]["head"]["rev"] == 1


@pytest.mark.req("API-1", "API-5", "API-6", "ATM-8", "SIG-3")
def test_graphql_atomise_lineage_policy_and_bundle_in_process(
    rule: Service, human: Binding
) -> None:
    parent = create(rule, human, THREE_SENTENCES)
    done = _gql(
        rule,
        human,
        "mutation($id: ID!) { atomise(atomId: $id, maxAtomTokens: 50) }",
        id=parent.atom_id,
    )["atomise"]
    assert done["sourceId"] == parent.atom_id and done["atomCount"] == 3
    _instants_leave_with_z(rule, human, parent.atom_id, done)
    again = _gql(rule, human, "mutation($id: ID!) { atomise(atomId: $id) }", id=parent.atom_id)
    assert again["atomise"]["alreadyAtomised"] is True
    assert again["atomise"]["atomIds"] == done["atomIds"]
    graph = _gql(
        rule, human, "query($id: ID!) { lineage(atomId: $id, depth: 1) }", id=parent.atom_id
    )["lineage"]
    assert {n["id"] for n in graph["nodes"]} == {parent.atom_id, *done["atomIds"]}
    policy = _gql(
        rule,
        human,
        "mutation($p: JSON!) { setNamespacePolicy(policy: $p) }",
        p={"auto_atomise_mode": "synchronous"},
    )["setNamespacePolicy"]
    assert policy["resolvedMode"] == "synchronous"
    export = _gql(
        rule,
        human,
        "mutation($id: ID!) { exportForensicBundle(atomId: $id) }",
        id=done["atomIds"][0],
    )["exportForensicBundle"]
    import base64
    import hashlib

    data = base64.b64decode(export["bundle"])
    assert hashlib.sha256(data).hexdigest() == export["sha256"]
    assert export["memories"] == 4 and export["lineage"] == 3
    assert verify_bundle_bytes(data).ok
    # The typed sibling: the same bundle's facts as fields, every one of the JSON's keys.
    typed = _gql(
        rule,
        human,
        "mutation($id: ID!) { exportForensicBundleTyped(atomId: $id) { bundle sha256 bytes "
        "memories revisions events lineage keys } }",
        id=done["atomIds"][0],
    )["exportForensicBundleTyped"]
    assert set(typed) == set(export)
    typed_data = base64.b64decode(typed["bundle"])
    assert hashlib.sha256(typed_data).hexdigest() == typed["sha256"]
    assert typed["bytes"] == len(typed_data) and verify_bundle_bytes(typed_data).ok
    counts = ("memories", "revisions", "events", "lineage", "keys")
    assert {k: typed[k] for k in counts} == {k: export[k] for k in counts}


@pytest.mark.req("ATM-4", "API-1")
def test_atomise_over_http_at_keyword_tier_is_tier_locked(
    live_server: Any, human: Binding, test_settings: Settings
) -> None:
    if test_settings.atomise.curator != "none":
        pytest.skip("the session service has a curator configured")
    token = live_server.token_for(human)
    body = live_server.gql('mutation { atomise(atomId: "x") }', token=token)
    assert body["data"] is None
    assert body["errors"][0]["extensions"]["code"] == "TIER_LOCKED"


@pytest.mark.req("API-5")
def test_the_lineage_page_redirects_to_the_explorer() -> None:
    """/lineage is retired: one drawing code path, the explorer's (docs/explorer.md)."""
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from graphsvc.http.lineage_page import lineage_route

    with TestClient(Starlette(routes=[lineage_route()])) as client:
        page = client.get("/lineage", params={"atom": "a b&c"}, follow_redirects=False)
        bare = client.get("/lineage", follow_redirects=False)
    assert page.status_code == 307
    assert page.headers["location"] == "/explore?atom=a+b%26c&lineage=1"
    assert bare.status_code == 307 and bare.headers["location"] == "/explore"
