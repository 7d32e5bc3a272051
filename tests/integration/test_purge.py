"""Retire, stale and purge (SPEC §6 LNK-1…LNK-6, TOK-3, IDEM-5), on a real Neo4j.

Atoms and tokens are made through the service like a caller would; legacy data
that the service can no longer produce (token-less agent revisions, lineage
edges, legacy links) is made with Cypher directly. The crash test runs the purge
CLI in a subprocess (purge_crash_entry.py) whose test-only step hook kills it by
SIGKILL after a chosen step.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from neo4j import RoutingControl

from graphsvc.core.binding import Binding
from graphsvc.core.requests import InspectRequest, ReadRequest, SearchRequest
from graphsvc.core.write_models import AtomRef
from graphsvc.errors import GraphsvcError
from graphsvc.inputs.models import parse_changes, parse_host_input
from graphsvc.ops.purge import STEPS, purge
from graphsvc.ops.write import WriteOutcome
from graphsvc.process_state.head_mirrors import forget_mirrors
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.store.connection import Database
from graphsvc.store.views import load_views

PAYLOAD = "sha256:" + "ab" * 32
REPO = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------- helpers
def secret_word() -> str:
    """A unique lowercase word: one Lucene term, easy to find wherever it is stored."""
    return "zq" + uuid.uuid4().hex


def ref_json(ref: AtomRef) -> dict[str, Any]:
    return {"atomId": ref.atom_id, "rev": ref.rev}


def cite(ref: AtomRef) -> dict[str, Any]:
    return {"uri": f"atom:{ref.atom_id}", "version": str(ref.rev)}


def link(role: str, ref: AtomRef, **target: Any) -> dict[str, Any]:
    return {"role": role, "target": {"ref": ref_json(ref), **target}}


def change(
    cid: str,
    text: str,
    links: Sequence[dict[str, Any]] = (),
    sources: Sequence[dict[str, Any]] = (),
    token: str | None = None,
    target: AtomRef | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": cid,
        "op": "create" if target is None else "revise",
        "content": {"text": text, "links": list(links)},
        "sources": list(sources),
    }
    if target is not None:
        out["target"] = ref_json(target)
    if token is not None:
        out["input"] = token
    return out


def write(
    service: Service, binding: Binding, changes: list[dict[str, Any]], key: str | None = None
) -> WriteOutcome:
    outcome: WriteOutcome = service.write(binding, parse_changes(changes), key)
    return outcome


def create(service: Service, binding: Binding, text: str, **kw: Any) -> AtomRef:
    view = write(service, binding, [change("a", text, **kw)]).changes["a"]
    return AtomRef(view.atom_id, view.rev)


def revise(service: Service, binding: Binding, target: AtomRef, text: str, **kw: Any) -> AtomRef:
    view = write(service, binding, [change("a", text, target=target, **kw)]).changes["a"]
    return AtomRef(view.atom_id, view.rev)


def retire(service: Service, binding: Binding, target: AtomRef) -> AtomRef:
    raw = [{"id": "r", "op": "retire", "target": ref_json(target)}]
    view = write(service, binding, raw).changes["r"]
    return AtomRef(view.atom_id, view.rev)


def observe(service: Service, binding: Binding, **host_input: Any) -> str:
    host_input.setdefault("payloadDigest", PAYLOAD)
    return service.observe(binding, parse_host_input(host_input))


def error_code(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    try:
        fn(*args, **kwargs)
    except GraphsvcError as exc:
        return exc.code
    raise AssertionError(f"{getattr(fn, '__name__', fn)} did not fail")


def cypher(db: Database, text: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = db.driver.execute_query(
        text, params, database_=db.database, routing_=RoutingControl.WRITE
    )
    forget_mirrors(db)  # a direct edit moves no generation the mirrors follow
    return [r.data() for r in records]


def stored_atom_ids(db: Database, subject: str) -> set[str]:
    rows = cypher(
        db,
        "MATCH (n) WHERE n.subject = $subject AND (n:Atom OR n:Revision) "
        "RETURN DISTINCT n.atomId AS id",
        subject=subject,
    )
    return {r["id"] for r in rows}


def everything_stored(db: Database, subject: str | None = None) -> str:
    """Every node and relationship property (lists included) as one string."""
    where = "" if subject is None else " WHERE n.subject = $subject"
    nodes = cypher(db, f"MATCH (n){where} RETURN properties(n) AS p", subject=subject)
    where_r = "" if subject is None else " WHERE a.subject = $subject OR b.subject = $subject"
    rels = cypher(db, f"MATCH (a)-[r]->(b){where_r} RETURN properties(r) AS p", subject=subject)
    return "\n".join(repr(row["p"]) for row in [*nodes, *rels])


def fulltext_hits(db: Database, word: str) -> int:
    rows = cypher(
        db,
        "CALL db.index.fulltext.queryNodes('current_text', $q) YIELD node RETURN count(node) AS n",
        q=word,
    )
    return int(rows[0]["n"])


def unavailable_links(db: Database, subject: str, ref: AtomRef) -> list[dict[str, Any]]:
    view = load_views(db, subject, [ref])[ref]
    return [
        {
            "role": lk.role,
            "at": lk.at,
            "required": lk.required,
            "orderKey": lk.order_key,
            "target": lk.target,
        }
        for lk in view.links
        if lk.unavailable
    ]


def _purger(subject: str, kind: str = "human") -> Binding:
    return Binding(subject, "default", kind, f"{kind}-ops", may_purge=True)  # type: ignore[arg-type]


# --------------------------------------------------------------------- LNK-1
@pytest.mark.req("LNK-4", "LNK-1", "WR-4")
def test_stale_blocked_retired_and_purged_are_four_different_conditions(
    service: Service, db: Database, human: Binding, agent: Binding
) -> None:
    s = human.subject
    x = create(service, human, "The office kettle is in room four.")
    token = observe(service, agent, watches=[ref_json(x)])
    y = create(service, agent, "Tea for the team is brewed in room four.", token=token)
    z = create(
        service,
        human,
        "Morning routine: brew the team tea first.",
        links=[link("needs", y, required=True)],
    )
    r_word = secret_word()
    r = create(service, human, f"Retired note about biscuits {r_word}.", links=[link("see", x)])
    p = create(service, human, "Purged note about coffee beans.")
    revise(service, human, x, "The office kettle moved to room seven.")

    # stale: Y's declared watch (X@1) no longer holds; Y is still current.
    inspected = service.inspect(human, InspectRequest(y.atom_id))
    assert inspected.stale is True and inspected.atom.state == "active"
    # blocked: Z needs Y's body and Y is stale, so Z cannot be presented.
    items = service.read(human, ReadRequest("morning routine brew team tea", 4096)).items
    blocked = {i.ref.atom_id: i.blocked for i in items}
    assert blocked[z.atom_id] is True
    assert blocked.get(y.atom_id, False) is False

    # retired: leaves search and read, but the retired revision keeps everything.
    before = load_views(db, s, [r])[r]
    r2 = retire(service, human, r)
    hits = service.search(human, SearchRequest(f"biscuits {r_word}")).hits
    assert r.atom_id not in {h.atom.atom_id for h in hits}
    read_ids = {i.ref.atom_id for i in service.read(human, ReadRequest("biscuits", 4096)).items}
    assert r.atom_id not in read_ids
    after = load_views(db, s, [r2])[r2]
    assert after.state == "retired" and after.text == before.text
    assert after.links == before.links and after.sources == before.sources

    # purged: gone, not merely hidden.
    outcome = service.purge(human, p.atom_id)
    assert outcome.purged == [p.atom_id] and outcome.resumed is False
    assert load_views(db, s, [p]) == {}
    assert p.atom_id not in stored_atom_ids(db, s)
    assert error_code(service.purge, human, p.atom_id) == "NOT_FOUND"
    # the retired and stale atoms are untouched by the purge
    assert {x.atom_id, y.atom_id, z.atom_id, r.atom_id} <= stored_atom_ids(db, s)


# --------------------------------------------------------------------- LNK-5
@pytest.mark.req("LNK-5", "LNK-2", "TOK-5", "TOK-6", "CUR-2")
def test_purge_follows_every_erasure_dependency_but_not_ordinary_links(
    service: Service, db: Database, human: Binding, agent: Binding
) -> None:
    s = human.subject
    words: dict[str, str] = {}

    def atom(name: str, binding: Binding = human, **kw: Any) -> AtomRef:
        words[name] = secret_word()
        return create(service, binding, f"{name} record {words[name]}", **kw)

    t1 = atom("target")
    manifest = service.read(human, ReadRequest(f"target record {words['target']}", 4096)).manifest
    assert ref_json(t1) in manifest["presentation"]["revisions"]
    t2 = revise(service, human, t1, f"target revised {secret_word()}")

    cited = atom("cited", sources=[cite(t1)])  # cites an old revision
    cited2 = atom("cited2", sources=[cite(cited)])  # second hop, through the fixpoint
    tok_basis = observe(service, agent, basis=[ref_json(t2)])
    gen_basis = atom("genbasis", agent, token=tok_basis)
    tok_inherit = observe(service, agent, inherit=[tok_basis])
    gen_inherit = atom("geninherit", agent, token=tok_inherit)
    tok_present = observe(service, agent, presentations=[manifest["id"]])
    gen_present = atom("genpresent", agent, token=tok_present)
    tok_source = observe(service, agent, sources=[cite(t1)])
    gen_source = atom("gensource", agent, token=tok_source)
    tok_watch = observe(service, agent, watches=[ref_json(t2)])
    gen_watch = atom("genwatch", agent, token=tok_watch)

    unrelated = atom("unrelated")
    tok_other = observe(service, agent, basis=[ref_json(unrelated)])
    legacy = atom("legacy")
    legacy_ok = atom("legacyok")
    derived = atom("derived")
    legacy_link = atom("legacylink")
    linker = atom("linker", links=[link("about", t2, at="logical", required=True, orderKey="k1")])
    observer = atom("observer", links=[link("see", t1)])

    # Imported legacy data: token-less agent revisions whose batch used an Input.
    for ref, basis_of in ((legacy, t2), (legacy_ok, unrelated)):
        cypher(
            db,
            "MATCH (r:Revision {subject: $s, atomId: $a})-[:WRITTEN_BY]->(o:Operation) "
            "MATCH (i:Input {subject: $s})-[:BASIS]->(:Revision {subject: $s, atomId: $b}) "
            "SET r.actorKind = 'agent', o.actorKind = 'agent' MERGE (o)-[:USED_INPUT]->(i)",
            s=s,
            a=ref.atom_id,
            b=basis_of.atom_id,
        )
    # Atomisation lineage and an imported legacy link, as their writers store them.
    cypher(
        db,
        "MATCH (c:Revision {subject: $s, atomId: $c, rev: 1}) "
        "MATCH (p:Revision {subject: $s, atomId: $p, rev: 1}) "
        "CREATE (c)-[:DERIVES_FROM {signature: 'sig'}]->(p)",
        s=s,
        c=derived.atom_id,
        p=t1.atom_id,
    )
    cypher(
        db,
        "MATCH (c:Revision {subject: $s, atomId: $c, rev: 1}) "
        "MATCH (p:Revision {subject: $s, atomId: $p, rev: 1}) "
        "CREATE (c)-[:LINK {role: 'old', at: 'observed', required: false, ordinal: 0,"
        " legacy: true}]->(p)",
        s=s,
        c=legacy_link.atom_id,
        p=t1.atom_id,
    )
    cypher(
        db,
        "CREATE (:UsageState {subject: $s, policy: 'default', atomId: $a, rev: 2,"
        " modelId: 'adaptiveUse', state: '{}'})",
        s=s,
        a=t1.atom_id,
    )
    paged = service.search(human, SearchRequest("record", limit=1))
    assert paged.cursor is not None

    outcome = service.purge(human, t1.atom_id)

    purged = {
        t1,
        cited,
        cited2,
        gen_basis,
        gen_inherit,
        gen_present,
        gen_source,
        gen_watch,
        legacy,
        derived,
        legacy_link,
    }
    survivors = {unrelated, legacy_ok, linker, observer}
    assert outcome.to_json() == {
        "atomId": t1.atom_id,
        "purged": sorted(r.atom_id for r in purged),
        "revisions": len(purged) + 1,  # the target had two revisions
        "inputs": 5,
        "resumed": False,
    }
    assert stored_atom_ids(db, s) == {r.atom_id for r in survivors}
    blob = everything_stored(db, s)
    for name, word in words.items():
        erased = name not in {"unrelated", "legacyok", "linker", "observer"}
        assert (word in blob) is not erased, name
    assert t1.atom_id not in blob  # not even as an id in a surviving record
    # The one Input that depends only on survivors is kept; the five others are gone.
    assert cypher(db, "MATCH (i:Input {subject: $s}) RETURN count(i) AS n", s=s)[0]["n"] == 1
    assert observe(service, agent, inherit=[tok_other])  # still valid
    for token in (tok_basis, tok_inherit, tok_present, tok_source, tok_watch):
        assert error_code(observe, service, agent, inherit=[token]) == "TOKEN_INVALID"
    leftovers = cypher(
        db,
        "MATCH (n) WHERE n.subject = $s AND (n:Manifest OR n:UsageState OR n:Evaluation"
        " OR n:PurgeMarker OR (n:Source AND n.uri STARTS WITH 'atom:')) "
        "RETURN labels(n) AS labels",
        s=s,
    )
    assert leftovers == []
    # LNK-2: survivors' links to the purged atom take the safe form.
    assert unavailable_links(db, s, linker) == [
        {"role": "about", "at": "logical", "required": True, "orderKey": "k1", "target": None}
    ]
    assert unavailable_links(db, s, observer) == [
        {"role": "see", "at": "observed", "required": False, "orderKey": None, "target": None}
    ]
    # Cursors of the subject expire with the purge epoch (CUR-2).
    assert (
        error_code(service.search, human, SearchRequest("record", limit=1, cursor=paged.cursor))
        == "CURSOR_EXPIRED"
    )


# --------------------------------------------------------------------- LNK-2 / LNK-4
LINK_FIELDS = "links { role unavailable required at orderKey target { atomId rev } }"
WRITE_GQL = (
    "mutation($changes: [ChangeInput!]!, $options: WriteOptionsInput) {"
    " write(changes: $changes, options: $options) { repeated"
    f" changes {{ id atom {{ atomId rev state text {LINK_FIELDS} }} }} }} }}"
)
INSPECT_GQL = f"query($id: ID!) {{ inspect(atomId: $id) {{ atom {{ state {LINK_FIELDS} }} }} }}"
PURGE_GQL = "mutation($id: ID!) { purge(atomId: $id) }"


@pytest.mark.req("LNK-2", "LNK-4", "API-6")
def test_link_to_purged_atom_shows_safe_form_over_graphql_and_survives_retire(
    service: Service, db: Database, live_server: Any, human: Binding
) -> None:
    s = human.subject
    token = live_server.token_for(human)
    target = create(service, human, "A colleague's private phone number.")
    ref_in = {"atomId": target.atom_id, "rev": 1}
    changes = [
        {
            "id": "o",
            "op": "CREATE",
            "content": {
                "text": "Call list for the weekend.",
                "links": [
                    {
                        "role": "contact",
                        "target": {
                            "ref": ref_in,
                            "at": "LOGICAL",
                            "required": True,
                            "orderKey": "a1",
                        },
                    },
                    {"role": "also", "target": {"ref": ref_in}},
                ],
            },
            "sources": [{"uri": "https://example.org/rota", "version": "3"}],
        }
    ]
    options = {"idempotencyKey": f"call-list-{uuid.uuid4().hex}"}
    first = live_server.gql(WRITE_GQL, {"changes": changes, "options": options}, token=token)
    assert "errors" not in first, first
    keeper = first["data"]["write"]["changes"][0]["atom"]

    service.purge(human, target.atom_id)

    safe = [
        {
            "role": "contact",
            "unavailable": True,
            "required": True,
            "at": "LOGICAL",
            "orderKey": "a1",
            "target": None,
        },
        {
            "role": "also",
            "unavailable": True,
            "required": False,
            "at": "OBSERVED",
            "orderKey": None,
            "target": None,
        },
    ]
    replay = live_server.gql(WRITE_GQL, {"changes": changes, "options": options}, token=token)
    assert "errors" not in replay, replay
    assert replay["data"]["write"]["repeated"] is True
    assert replay["data"]["write"]["changes"][0]["atom"]["links"] == safe
    inspected = live_server.gql(INSPECT_GQL, {"id": keeper["atomId"]}, token=token)
    assert "errors" not in inspected, inspected
    assert inspected["data"]["inspect"]["atom"]["links"] == safe

    # LNK-4: retiring keeps the unavailable links as they are (and adds no target).
    retire_changes = [{"id": "r", "op": "RETIRE", "target": {"atomId": keeper["atomId"], "rev": 1}}]
    retired = live_server.gql(WRITE_GQL, {"changes": retire_changes}, token=token)
    assert "errors" not in retired, retired
    atom = retired["data"]["write"]["changes"][0]["atom"]
    assert atom["state"] == "retired" and atom["rev"] == 2
    assert atom["text"] == "Call list for the weekend." and atom["links"] == safe
    view = load_views(db, s, [AtomRef(keeper["atomId"], 2)])[AtomRef(keeper["atomId"], 2)]
    assert [lk.unavailable for lk in view.links] == [True, True]
    assert view.sources == ({"uri": "https://example.org/rota", "version": "3", "verified": False},)


# --------------------------------------------------------------------- IDEM-5 / TOK-3
@pytest.mark.req("IDEM-5")
def test_replay_of_purged_result_is_refused_and_resurrects_nothing(
    service: Service, db: Database, human: Binding
) -> None:
    s = human.subject
    word = secret_word()
    plan = [change("a", f"Salary of the new hire: {word}.")]
    key = f"hire-{uuid.uuid4().hex}"
    made = write(service, human, plan, key).changes["a"]
    service.purge(human, made.atom_id)

    assert error_code(write, service, human, plan, key) == "DEPENDENCY_INVALID"
    assert stored_atom_ids(db, s) == set()
    assert word not in everything_stored(db, s)
    keys = cypher(db, "MATCH (k:IdempotencyKey {subject: $s}) RETURN properties(k) AS p", s=s)
    assert len(keys) == 1
    assert set(keys[0]["p"]) == {"scopeKey", "subject", "state"}
    assert keys[0]["p"]["state"] == "purged"


@pytest.mark.req("TOK-3")
def test_token_whose_inputs_were_purged_is_token_invalid(
    service: Service, human: Binding, agent: Binding
) -> None:
    target = create(service, human, "Draft budget for next year.")
    token = observe(service, agent, basis=[ref_json(target)])
    service.purge(human, target.atom_id)
    code = error_code(write, service, agent, [change("a", "Summary of the budget.", token=token)])
    assert code == "TOKEN_INVALID"


# --------------------------------------------------------------------- authorisation
@pytest.mark.req("CORE-1", "API-2")
def test_only_humans_and_input_adapters_with_the_purge_right_may_purge(
    service: Service, db: Database, live_server: Any, human: Binding, agent: Binding
) -> None:
    s = human.subject
    a = create(service, human, "Note one.")
    b = create(service, human, "Note two.")
    agent_with_right = Binding(s, "default", "agent", "bot-2", may_purge=True)
    human_without = Binding(s, "default", "human", "bob")
    assert error_code(service.purge, agent, a.atom_id) == "PERMISSION_DENIED"
    assert error_code(service.purge, agent_with_right, a.atom_id) == "PERMISSION_DENIED"
    assert error_code(service.purge, human_without, a.atom_id) == "PERMISSION_DENIED"
    assert {a.atom_id, b.atom_id} <= stored_atom_ids(db, s)

    body = live_server.gql(PURGE_GQL, {"id": a.atom_id}, token=live_server.token_for(agent))
    assert body["errors"][0]["extensions"]["code"] == "PERMISSION_DENIED"
    body = live_server.gql(PURGE_GQL, {"id": a.atom_id}, token=live_server.token_for(_purger(s)))
    assert "errors" not in body, body
    assert body["data"]["purge"] == {
        "atomId": a.atom_id,
        "purged": [a.atom_id],
        "revisions": 1,
        "inputs": 0,
        "resumed": False,
    }
    assert service.purge(_purger(s, "input-adapter"), b.atom_id).purged == [b.atom_id]
    assert stored_atom_ids(db, s) == set()
    # Unknown atoms and other subjects' atoms are simply not found.
    other = create(
        service,
        Binding("t-other-" + uuid.uuid4().hex[:8], "default", "human", "x"),
        "Someone else's note.",
    )
    assert error_code(service.purge, human, other.atom_id) == "NOT_FOUND"
    assert error_code(service.purge, human, "no-such-atom") == "NOT_FOUND"


# --------------------------------------------------------------------- LNK-6 crash test
CHAIN = 20
# Runs the CLI with a purge step hook that SIGKILLs the process after a given step.
CRASH_ENTRY = Path(__file__).with_name("purge_crash_entry.py")


class _StopAfter(Exception):
    """Raised by a step hook to stop a purge right after a step committed."""


@pytest.mark.req("LNK-6")
def test_purge_step_hook_sees_each_committed_step_once_across_a_resume(
    service: Service, db: Database
) -> None:
    s = f"t-{uuid.uuid4().hex[:12]}"
    human = _purger(s)
    first = create(service, human, f"First {secret_word()}.")
    second = create(service, human, f"Second {secret_word()}.", sources=[cite(first)])
    seen: list[str] = []

    def stop_after_erase(step: str) -> None:
        seen.append(step)
        if step == "erase":
            raise _StopAfter(step)

    with pytest.raises(_StopAfter):
        purge(db, service.clock, human, first.atom_id, after_step=stop_after_erase)
    assert seen == ["plan", "relink", "erase"]
    marker = cypher(db, "MATCH (p:PurgeMarker {subject: $s}) RETURN p.step AS step", s=s)
    assert marker == [{"step": "erase"}]
    assert stored_atom_ids(db, s) == set()  # erase committed before the hook stopped it

    resumed = purge(db, service.clock, human, first.atom_id, after_step=seen.append)
    assert seen == ["plan", "relink", "erase", "tombstone", "epoch"]
    assert resumed.resumed is True
    assert resumed.purged == sorted([first.atom_id, second.atom_id])
    assert cypher(db, "MATCH (p:PurgeMarker {subject: $s}) RETURN p", s=s) == []


def _chain(service: Service, human: Binding, agent: Binding) -> tuple[list[AtomRef], list[str]]:
    """CHAIN atoms, each depending on the previous: by citation or by generation input."""
    refs: list[AtomRef] = []
    words: list[str] = []
    for i in range(CHAIN):
        word = secret_word()
        if i == 0:
            ref = create(service, human, f"Chain start {word}.")
        elif i % 2:
            ref = create(service, human, f"Chain {i} quotes {word}.", sources=[cite(refs[-1])])
        else:
            token = observe(service, agent, basis=[ref_json(refs[-1])])
            ref = create(service, agent, f"Chain {i} derived {word}.", token=token)
        refs.append(ref)
        words.append(word)
    return refs, words


@pytest.mark.req("LNK-6", "LNK-5", "LNK-2")
@pytest.mark.slow
def test_purge_killed_after_each_step_resumes_and_leaves_nothing_behind(
    service: Service, db: Database, test_settings: Settings, tmp_path: Path
) -> None:
    cases = []
    for step in STEPS:
        s = f"t-{uuid.uuid4().hex[:12]}"
        human = Binding(s, "default", "human", "alice", may_purge=True)
        agent = Binding(s, "default", "agent", "bot-1")
        chain, words = _chain(service, human, agent)
        keep_word = secret_word()
        keeper = create(
            service, human, f"Keeper {keep_word}.", links=[link("see", chain[0], at="logical")]
        )
        cases.append((step, human, chain, words, keeper, keep_word))

    env = {
        **os.environ,
        "GRAPHSVC_NEO4J_URI": test_settings.neo4j.uri,
        "GRAPHSVC_NEO4J_USER": test_settings.neo4j.user,
        "GRAPHSVC_NEO4J_PASSWORD": test_settings.neo4j.password,
        "GRAPHSVC_NEO4J_DATABASE": test_settings.neo4j.database,
        "GRAPHSVC_STATE_DIR": str(tmp_path),
    }
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(CRASH_ENTRY),
                step,
                "purge",
                chain[0].atom_id,
                "--subject",
                human.subject,
                "--json",
            ],
            env=env,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for step, human, chain, *_ in cases
    ]
    for (step, *_), proc in zip(cases, procs, strict=True):
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == -signal.SIGKILL, (step, proc.returncode, out, err[-2000:])

    for step, human, chain, _words, keeper, _ in cases:
        marker = cypher(
            db,
            "MATCH (p:PurgeMarker {subject: $s}) RETURN p.atomId AS atomId, p.step AS step",
            s=human.subject,
        )
        assert marker == [{"atomId": chain[0].atom_id, "step": step}]
        pending = [
            error_code(write, service, human, [change("a", "New note.")]),
            error_code(service.read, human, ReadRequest("chain", 1000)),
            error_code(service.search, human, SearchRequest("chain")),
            error_code(observe, service, human),
            error_code(service.purge, human, keeper.atom_id),
        ]
        assert pending == ["PURGE_PENDING"] * 5, step
        outcome = service.purge(human, chain[0].atom_id)
        assert outcome.to_json() == {
            "atomId": chain[0].atom_id,
            "purged": sorted(r.atom_id for r in chain),
            "revisions": CHAIN,
            "inputs": (CHAIN - 1) // 2,
            "resumed": True,
        }, step
        assert stored_atom_ids(db, human.subject) == {keeper.atom_id}, step
        assert unavailable_links(db, human.subject, keeper) == [
            {"role": "see", "at": "logical", "required": False, "orderKey": None, "target": None}
        ], step
        assert create(service, human, "Life goes on.")  # the subject is open again

    erased = [w for case in cases for w in case[3]]
    kept = [case[5] for case in cases]
    blob = everything_stored(db)
    assert all(w in blob for w in kept)  # the scan sees stored text at all
    assert [w for w in erased if w in blob] == []
    assert all(fulltext_hits(db, w) == 1 for w in kept)
    assert [w for w in erased if fulltext_hits(db, w)] == []


@pytest.mark.req("LNK-6", "CUR-1")
def test_an_evaluation_stored_after_its_answer_is_refused_once_a_purge_moved_the_epoch(
    service: Service, db: Database, human: Binding
) -> None:
    # Searches store the evaluation behind their cursor after answering (Pager.save_later):
    # a save that lands after a purge must not bring back the ids it erased.
    from graphsvc.store.cursors import save_evaluation, subject_state

    s = human.subject
    create(service, human, "quartz geodes form in hollow rock")
    epoch = int(subject_state(db, s)["purgeEpoch"])
    args = {"subject": s, "payload": "{}", "expires_at": 1e12, "now": 0.0}
    assert save_evaluation(db, eval_id="before", purge_epoch=epoch, **args)
    db.driver.execute_query(
        "CREATE (:PurgeMarker {subject: $s, atomId: 'x'})", {"s": s}, database_=db.database
    )
    assert not save_evaluation(db, eval_id="during", purge_epoch=epoch, **args)
    db.driver.execute_query(
        "MATCH (p:PurgeMarker {subject: $s}) DELETE p "
        "MERGE (st:SubjectState {subject: $s}) SET st.purgeEpoch = $e",
        {"s": s, "e": epoch + 1},
        database_=db.database,
    )
    assert not save_evaluation(db, eval_id="after", purge_epoch=epoch, **args)
    assert save_evaluation(db, eval_id="new", purge_epoch=epoch + 1, **args)
    stored = db.driver.execute_query(
        "MATCH (e:Evaluation {subject: $s}) RETURN e.evalId AS id ORDER BY id",
        {"s": s},
        database_=db.database,
    ).records
    assert [r["id"] for r in stored] == ["before", "new"]
