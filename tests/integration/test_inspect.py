"""``inspect`` (SPEC §7 INS-1 … INS-4, LNK-2, LNK-3, CUR-2, CUR-3) against the real Neo4j.

Through the service and over GraphQL/HTTP, plus the CLI in a subprocess. Each test
writes its own atoms in a fresh subject.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from neo4j import RoutingControl

from graphsvc.core.binding import Binding
from graphsvc.core.requests import InspectRequest
from graphsvc.core.write_models import AtomView
from graphsvc.errors import GraphsvcError
from graphsvc.inputs.models import parse_changes, parse_host_input
from graphsvc.ops.inspect import DEFAULT_RANGE_BYTES, byte_range
from graphsvc.process_state.head_mirrors import forget_mirrors
from graphsvc.runtime import service_for
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.store.connection import round_trips

INSPECT = """
query($atomId: ID!, $rev: Int, $version: LinkAt, $direction: Direction, $roles: [String!],
      $limit: Int, $cursor: String, $rangeStart: Int, $rangeEnd: Int) {
  inspect(atomId: $atomId, rev: $rev, version: $version, direction: $direction, roles: $roles,
          limit: $limit, cursor: $cursor, rangeStart: $rangeStart, rangeEnd: $rangeEnd) {
    atom { atomId rev state text head
           links { role unavailable required at orderKey target { atomId rev } } }
    neighbors { atom { atomId rev state head } via { direction role at required orderKey } }
    receipt readEligibility stale diagnostics usage cursor
  }
}
"""


# ----------------------------------------------------------------------- helpers


def link(role: str, *, local: str | None = None, ref: AtomView | None = None, **opts: Any) -> dict:
    target: dict[str, Any] = dict(opts)
    if local is not None:
        target["local"] = local
    if ref is not None:
        target["ref"] = {"atomId": ref.atom_id, "rev": ref.rev}
    return {"role": role, "target": target}


def new(cid: str, text: str, links: Sequence[dict] = (), token: str | None = None) -> dict:
    change: dict[str, Any] = {
        "id": cid,
        "op": "create",
        "content": {"text": text, "links": list(links)},
        "sources": [],
    }
    if token:
        change["input"] = token
    return change


def revise(cid: str, view: AtomView, text: str, links: Sequence[dict] = ()) -> dict:
    change = new(cid, text, links)
    change.update(op="revise", target={"atomId": view.atom_id, "rev": view.rev})
    return change


def write(service: Service, binding: Binding, changes: list[dict]) -> dict[str, AtomView]:
    return dict(service.write(binding, parse_changes(changes)).changes)


def cypher(service: Service, text: str, **params: Any) -> list[dict[str, Any]]:
    """Direct Cypher, for simulating what a later purge leaves behind."""
    records, _, _ = service.db.driver.execute_query(
        text, params, database_=service.db.database, routing_=RoutingControl.WRITE
    )
    forget_mirrors(service.db)  # a direct edit moves no generation the mirrors follow
    return [r.data() for r in records]


def error_of(fn: Any, *args: Any, **kwargs: Any) -> GraphsvcError:
    with pytest.raises(GraphsvcError) as info:
        fn(*args, **kwargs)
    return info.value


def ids(result: Any) -> list[tuple[str, int]]:
    return [(n.atom.atom_id, n.atom.rev) for n in result.neighbors]


def vias(result: Any, atom_id: str) -> list[tuple[str, str, str, bool]]:
    (n,) = [n for n in result.neighbors if n.atom.atom_id == atom_id]
    return [(v.direction, v.role, v.at, v.required) for v in n.via]


# ----------------------------------------------------------------------- INS-1


@pytest.mark.req("INS-1", "INS-2", "CUR-2")
def test_defaults_page_twenty_neighbours_and_cursor_pages_the_rest(
    service: Service, human: Binding
) -> None:
    out = write(
        service,
        human,
        [new("root", "hub", [link("has", local=f"n{i}") for i in range(25)])]
        + [new(f"n{i}", f"leaf {i}") for i in range(25)],
    )
    root = out["root"]
    first = service.inspect(human, InspectRequest(root.atom_id))
    acq = first.diagnostics["acquisition"]
    assert (acq["version"], acq["direction"]) == ("observed", "both")
    assert first.diagnostics["selection"]["limit"] == 20
    assert len(first.neighbors) == 20 and first.cursor
    second = service.inspect(human, InspectRequest(root.atom_id, cursor=first.cursor))
    assert len(second.neighbors) == 5 and second.cursor is None
    everything = ids(first) + ids(second)
    assert everything == sorted(everything)  # stable order: atomId, rev
    assert {a for a, _ in everything} == {out[f"n{i}"].atom_id for i in range(25)}
    assert second.diagnostics["selection"]["offset"] == 20
    # Later pages come from the frozen evaluation: same receipt, same root.
    assert second.receipt == first.receipt and second.atom == first.atom


@pytest.mark.req("INS-1")
def test_direction_and_roles_filter_neighbours(service: Service, human: Binding) -> None:
    out = write(
        service,
        human,
        [
            new("a", "A", [link("cites", local="b"), link("next", local="c")]),
            new("b", "B"),
            new("c", "C"),
            new("d", "D", [link("next", local="a")]),
        ],
    )
    a, b, c, d = (out[k].atom_id for k in "abcd")
    assert {x for x, _ in ids(service.inspect(human, InspectRequest(a)))} == {b, c, d}
    assert {x for x, _ in ids(service.inspect(human, InspectRequest(a, direction="outgoing")))} == {
        b,
        c,
    }
    assert {x for x, _ in ids(service.inspect(human, InspectRequest(a, direction="incoming")))} == {
        d
    }
    assert {x for x, _ in ids(service.inspect(human, InspectRequest(a, roles=["next"])))} == {c, d}
    only = service.inspect(human, InspectRequest(a, roles=["next"], direction="outgoing"))
    assert ids(only) == [(c, 1)] and vias(only, c) == [("outgoing", "next", "observed", False)]
    assert (
        error_of(service.inspect, human, InspectRequest(a, direction="sideways")).code
        == "INVALID_INPUT"
    )
    assert error_of(service.inspect, human, InspectRequest(a, limit=-1)).code == "INVALID_INPUT"


# ----------------------------------------------------------------------- INS-4


@pytest.mark.req("INS-4", "INS-1")
def test_limit_zero_is_root_only_and_empty_roles_have_no_neighbours(
    service: Service, human: Binding
) -> None:
    out = write(service, human, [new("a", "A", [link("r", local="b")]), new("b", "B")])
    a = out["a"].atom_id
    root_only = service.inspect(human, InspectRequest(a, limit=0))
    assert root_only.atom.text == "A" and root_only.neighbors == [] and root_only.cursor is None
    no_roles = service.inspect(human, InspectRequest(a, roles=[]))
    assert no_roles.neighbors == [] and no_roles.cursor is None
    assert no_roles.atom.links[0].role == "r"  # the root itself is whole


@pytest.mark.req("INS-4", "API-6")
def test_neighbour_linked_both_ways_with_two_roles_each_has_four_vias_over_http(
    live_server: Any, service: Service, human: Binding
) -> None:
    out = write(
        service,
        human,
        [
            new(
                "a",
                "A",
                [link("x", local="b"), link("y", local="b", at="logical", required=True)],
            ),
            new("b", "B", [link("p", local="a", orderKey="k1"), link("q", local="a")]),
        ],
    )
    body = live_server.gql(
        INSPECT, {"atomId": out["a"].atom_id}, token=live_server.token_for(human)
    )
    assert "errors" not in body, body
    result = body["data"]["inspect"]
    (neighbor,) = result["neighbors"]
    assert neighbor["atom"] == {
        "atomId": out["b"].atom_id,
        "rev": 1,
        "state": "active",
        "head": True,
    }
    assert neighbor["via"] == [
        {
            "direction": "OUTGOING",
            "role": "x",
            "at": "OBSERVED",
            "required": False,
            "orderKey": None,
        },
        {"direction": "OUTGOING", "role": "y", "at": "LOGICAL", "required": True, "orderKey": None},
        {
            "direction": "INCOMING",
            "role": "p",
            "at": "OBSERVED",
            "required": False,
            "orderKey": "k1",
        },
        {
            "direction": "INCOMING",
            "role": "q",
            "at": "OBSERVED",
            "required": False,
            "orderKey": None,
        },
    ]
    assert result["cursor"] is None and result["stale"] is False


# ----------------------------------------------------------------------- INS-3


@pytest.mark.req("INS-3")
def test_observed_links_stay_pinned_and_logical_links_follow_the_head(
    service: Service, human: Binding
) -> None:
    out = write(service, human, [new("b", "B1"), new("c", "C1")])
    b1, c1 = out["b"], out["c"]
    a = write(
        service,
        human,
        [
            new(
                "a",
                "A",
                [link("obs", ref=b1), link("log", ref=c1, at="logical"), link("both", ref=c1)],
            )
        ],
    )["a"]
    later = write(service, human, [revise("b", b1, "B2"), revise("c", c1, "C2")])
    b, c = b1.atom_id, c1.atom_id
    observed = service.inspect(human, InspectRequest(a.atom_id, direction="outgoing"))
    assert ids(observed) == sorted([(b, 1), (c, 1), (c, 2)])
    by_ref = {(n.atom.atom_id, n.atom.rev): n for n in observed.neighbors}
    assert by_ref[(b, 1)].atom.text == "B1" and not by_ref[(b, 1)].atom.head
    assert by_ref[(c, 2)].atom.text == "C2" and by_ref[(c, 2)].atom.head
    logical = service.inspect(
        human, InspectRequest(a.atom_id, direction="outgoing", version="logical")
    )
    assert ids(logical) == sorted([(b, 2), (c, 2)])
    # Logical binding collapses the pinned and the logical link to C into one neighbour.
    assert vias(logical, c) == [
        ("outgoing", "log", "logical", False),
        ("outgoing", "both", "observed", False),
    ]
    assert later["b"].rev == 2


@pytest.mark.req("INS-3")
def test_incoming_links_come_from_heads_and_logical_ones_bind_to_the_head(
    service: Service, human: Binding
) -> None:
    b1 = write(service, human, [new("b", "B1")])["b"]
    out = write(
        service,
        human,
        [
            new("p", "pins B1", [link("pin", ref=b1)]),
            new("l", "follows B", [link("follow", ref=b1, at="logical")]),
        ],
    )
    p, lg = out["p"], out["l"]
    b2 = write(service, human, [revise("b", b1, "B2")])["b"]
    at_rev1 = service.inspect(human, InspectRequest(b1.atom_id, rev=1, direction="incoming"))
    assert ids(at_rev1) == [(p.atom_id, 1)]
    at_head = service.inspect(human, InspectRequest(b1.atom_id, direction="incoming"))
    assert at_head.atom.rev == b2.rev == 2 and ids(at_head) == [(lg.atom_id, 1)]
    # Once p's head no longer links, p is no longer an incoming neighbour.
    write(service, human, [revise("p", p, "pins nothing")])
    assert (
        service.inspect(human, InspectRequest(b1.atom_id, rev=1, direction="incoming")).neighbors
        == []
    )


# ----------------------------------------------------------------------- INS-2 / NOT_FOUND


@pytest.mark.req("INS-2")
def test_result_carries_receipt_eligibility_and_an_older_revision_on_request(
    service: Service, human: Binding
) -> None:
    v1 = write(service, human, [new("a", "first")])["a"]
    write(service, human, [revise("a", v1, "second")])
    head = service.inspect(human, InspectRequest(v1.atom_id))
    assert (head.atom.rev, head.atom.text, head.atom.head) == (2, "second", True)
    assert head.read_eligibility == {
        **head.read_eligibility,
        "eligible": True,
        "reasons": [],
    }
    old = service.inspect(human, InspectRequest(v1.atom_id, rev=1))
    assert (old.atom.rev, old.atom.text, old.atom.head) == (1, "first", False)
    assert old.read_eligibility["eligible"] is False
    assert old.read_eligibility["reasons"] == ["superseded"]
    r = old.receipt
    assert (r["atomId"], r["rev"], r["kind"]) == (v1.atom_id, 1, "inspect")
    assert r["receipt"].startswith("grc1.") and r["digest"].startswith("sha256:")
    assert r["expiresAt"] - r["evaluatedAt"] == service.settings.lifetimes.receipt_lifetime_s
    assert old.usage is None and old.stale is False


@pytest.mark.req("INS-2", "API-2")
def test_missing_atom_rev_and_other_subjects_atom_are_the_same_not_found(
    service: Service, human: Binding, live_server: Any
) -> None:
    a = write(service, human, [new("a", "secret of one subject")])["a"]
    stranger = Binding(human.subject + "-other", "default", "human", "eve")
    errors = [
        error_of(service.inspect, stranger, InspectRequest(a.atom_id)),
        error_of(service.inspect, human, InspectRequest("no-such-atom")),
        error_of(service.inspect, human, InspectRequest(a.atom_id, rev=7)),
    ]
    assert {(e.code, e.message) for e in errors} == {("NOT_FOUND", errors[0].message)}
    body = live_server.gql(INSPECT, {"atomId": a.atom_id}, token=live_server.token_for(stranger))
    assert body["data"] is None
    assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    assert "secret" not in json.dumps(body)


# ----------------------------------------------------------------------- LNK-3


@pytest.mark.req("LNK-3", "INS-2")
def test_retired_body_is_shown_but_not_read_eligible(service: Service, human: Binding) -> None:
    a = write(service, human, [new("a", "kept body")])["a"]
    service.write(
        human,
        parse_changes([{"id": "r", "op": "retire", "target": {"atomId": a.atom_id, "rev": 1}}]),
    )
    result = service.inspect(human, InspectRequest(a.atom_id))
    assert (result.atom.rev, result.atom.state, result.atom.text) == (2, "retired", "kept body")
    assert result.read_eligibility["eligible"] is False
    assert result.read_eligibility["reasons"] == ["retired"]
    # A required logical link to a retired head is reported as blocked (one hop).
    b = write(
        service, human, [new("b", "needs a", [link("req", ref=a, at="logical", required=True)])]
    )["b"]
    blocked = service.inspect(human, InspectRequest(b.atom_id))
    assert blocked.read_eligibility["reasons"] == ["blocked"]
    assert blocked.diagnostics["validation"]["requiredBlocked"] == 1


@pytest.mark.req("LNK-3", "ATM-6")
def test_archived_parent_is_shown_with_archived_reason(service: Service, human: Binding) -> None:
    a = write(service, human, [new("a", "long parent")])["a"]
    cypher(
        service,
        "MATCH (r:Revision {subject: $s, atomId: $a, rev: 1}) "
        "SET r.atomisedInto = 3, r.archivedAt = '2025-01-01T00:00:00Z'",
        s=human.subject,
        a=a.atom_id,
    )
    result = service.inspect(human, InspectRequest(a.atom_id))
    assert result.atom.text == "long parent"
    assert result.read_eligibility["reasons"] == ["archived"]
    assert result.read_eligibility["eligibleWithIncludeArchived"] is True


# ----------------------------------------------------------------------- LNK-2


@pytest.mark.req("LNK-2", "INS-2")
def test_unavailable_link_shows_safe_form_and_never_the_target_id_over_http(
    live_server: Any, service: Service, human: Binding
) -> None:
    out = write(
        service,
        human,
        [
            new(
                "a",
                "A",
                [
                    link("gone", local="b", required=True, orderKey="o1"),
                    link("purged", local="c", at="logical"),
                    link("kept", local="d"),
                ],
            ),
            new("b", "hidden body B"),
            new("c", "hidden body C"),
            new("d", "D"),
        ],
    )
    a, b, c, d = (out[k].atom_id for k in "abcd")
    cypher(
        service,
        "MATCH (:Revision {subject: $s, atomId: $a})-[l:LINK {role: 'gone'}]->() "
        "SET l.unavailable = true",
        s=human.subject,
        a=a,
    )
    cypher(
        service, "MATCH (n:Atom {subject: $s, atomId: $c}) SET n:Unavailable", s=human.subject, c=c
    )
    body = live_server.gql(INSPECT, {"atomId": a}, token=live_server.token_for(human))
    assert "errors" not in body, body
    raw = json.dumps(body)
    for secret in (b, c, "hidden body"):
        assert secret not in raw
    result = body["data"]["inspect"]
    assert [n["atom"]["atomId"] for n in result["neighbors"]] == [d]
    assert result["atom"]["links"][:2] == [
        {
            "role": "gone",
            "unavailable": True,
            "required": True,
            "at": "OBSERVED",
            "orderKey": "o1",
            "target": None,
        },
        {
            "role": "purged",
            "unavailable": True,
            "required": False,
            "at": "LOGICAL",
            "orderKey": None,
            "target": None,
        },
    ]
    acq = result["diagnostics"]["acquisition"]
    assert acq["unavailableCount"] == 2
    assert {(u["role"], u["unavailable"]) for u in acq["unavailable"]} == {
        ("gone", True),
        ("purged", True),
    }
    assert all(
        set(u) <= {"direction", "role", "at", "required", "orderKey", "unavailable"}
        for u in acq["unavailable"]
    )
    assert result["readEligibility"]["reasons"] == ["blocked"]  # the required one is gone


@pytest.mark.req("INS-2", "INS-3", "INS-4", "LNK-2", "ENT-5")
def test_first_page_is_one_round_trip_and_agrees_with_the_as_of_reads(
    service: Service, human: Binding
) -> None:
    """The present first page (``inspect/first_page``) answers in one round trip what
    the as-of reads (root, neighbourhood, entities and views as separate queries)
    answer for an instant after the last write: every part of the neighbourhood —
    outgoing observed and logical links, incoming ones, an unavailable link, usage,
    entities shared with a neighbour, the page's views and the total past the limit."""
    out = write(
        service,
        human,
        [
            new(
                "a",
                "Caroline met Jon in Boston.",
                [
                    link("cites", local="b", orderKey="k2"),
                    link("uses", local="c", at="logical", required=True),
                    link("gone", local="d", required=True),
                ],
            ),
            new("b", "Jon moved to Boston last year."),
            new("c", "A note with no names."),
            new("d", "hidden body D"),
            new("e", "Caroline answered.", [link("replies", local="a")]),
        ],
    )
    a = out["a"]
    write(service, human, [revise("c", out["c"], "The note, revised.")])
    cypher(
        service,
        "MATCH (:Revision {subject: $s, atomId: $a})-[l:LINK {role: 'gone'}]->() "
        "SET l.unavailable = true",
        s=human.subject,
        a=a.atom_id,
    )
    service.record_use(human, "evt-first-page", {}, [a.ref])
    time.sleep(0.05)  # the instant below is after every write's createdAt
    instant = datetime.now(UTC).isoformat()
    before = round_trips()
    whole = service.inspect(human, InspectRequest(a.atom_id))  # no cursor to save
    assert round_trips() - before == 1
    assert len(whole.neighbors) == 3 and whole.cursor is None
    now = service.inspect(human, InspectRequest(a.atom_id, limit=2))
    then = service.inspect(human, InspectRequest(a.atom_id, limit=2, as_of=instant))

    def comparable(result: Any) -> dict[str, Any]:
        out = result.to_json()
        for key in ("receipt", "cursor"):
            out.pop(key)
        out["usage"].pop("evaluatedAt")
        out["usage"].pop("value")
        out["diagnostics"]["acquisition"].pop("evaluatedAt")
        return out

    assert comparable(now) == comparable(then)
    assert [n.atom.atom_id for n in now.neighbors] == sorted(
        [out["b"].atom_id, out["c"].atom_id, out["e"].atom_id]
    )[:2]
    assert now.diagnostics["selection"]["total"] == 3 and now.cursor is not None
    assert {n.atom.atom_id: n.atom.rev for n in now.neighbors}.get(out["c"].atom_id, 2) == 2
    acq = now.diagnostics["acquisition"]
    assert acq["unavailable"] == [
        {
            "direction": "outgoing",
            "role": "gone",
            "at": "observed",
            "required": True,
            "unavailable": True,
        }
    ]
    entities = now.diagnostics["evaluation"]["entities"]
    assert entities["mentions"] >= 2 and entities["neighboursSharing"] >= 1
    assert now.read_eligibility["reasons"] == ["blocked"]
    assert now.usage is not None and now.usage["state"]


# ----------------------------------------------------------------------- stale


@pytest.mark.req("INS-2", "LNK-1")
def test_stale_when_a_watched_head_moves(service: Service, agent: Binding) -> None:
    human = Binding(agent.subject, agent.policy, "human", "seeder")
    w = write(service, human, [new("w", "watched")])["w"]
    token = service.observe(
        agent,
        parse_host_input(
            {"watches": [{"atomId": w.atom_id, "rev": 1}], "payloadDigest": "sha256:" + "0" * 64}
        ),
    )
    a = write(service, agent, [new("a", "written while w@1 held", token=token)])["a"]
    fresh = service.inspect(agent, InspectRequest(a.atom_id))
    assert fresh.stale is False
    assert fresh.diagnostics["validation"]["watches"] == [
        {"atomId": w.atom_id, "rev": 1, "headRev": 1, "moved": False}
    ]
    write(service, human, [revise("w", w, "watched, changed")])
    moved = service.inspect(agent, InspectRequest(a.atom_id))
    assert moved.stale is True
    assert moved.diagnostics["validation"]["watches"][0]["moved"] is True


# ----------------------------------------------------------------------- CORE-2 / usage


@pytest.mark.req("CORE-2", "AV-4", "INS-2")
def test_inspect_shows_usage_and_changes_nothing(service: Service, human: Binding) -> None:
    a = write(service, human, [new("a", "used body")])["a"]
    service.record_use(human, "evt-1", {}, [a.ref])
    before = cypher(
        service,
        "MATCH (n {subject: $s}) WHERE NOT n:Evaluation "
        "OPTIONAL MATCH (n)-[r]->() "
        "RETURN count(DISTINCT n) AS nodes, count(r) AS rels, "
        "collect(DISTINCT n.state) AS states",
        s=human.subject,
    )
    first = service.inspect(human, InspectRequest(a.atom_id))
    second = service.inspect(human, InspectRequest(a.atom_id))
    after = cypher(
        service,
        "MATCH (n {subject: $s}) WHERE NOT n:Evaluation "
        "OPTIONAL MATCH (n)-[r]->() "
        "RETURN count(DISTINCT n) AS nodes, count(r) AS rels, "
        "collect(DISTINCT n.state) AS states",
        s=human.subject,
    )
    assert before == after
    assert first.usage is not None and first.usage["modelId"] == "adaptiveUse"
    assert first.usage["state"] == second.usage["state"]
    assert first.usage["value"] > 0


@pytest.mark.req("LNK-6")
def test_purge_pending_stops_inspect(service: Service, human: Binding) -> None:
    a = write(service, human, [new("a", "A")])["a"]
    cypher(
        service, "CREATE (:PurgeMarker {subject: $s, atomId: 'x', step: 'start'})", s=human.subject
    )
    try:
        assert error_of(service.inspect, human, InspectRequest(a.atom_id)).code == "PURGE_PENDING"
    finally:
        cypher(service, "MATCH (p:PurgeMarker {subject: $s}) DELETE p", s=human.subject)


# ----------------------------------------------------------------------- CUR-2


@pytest.mark.req("CUR-2")
def test_cursor_expires_on_any_change_of_options_binding_or_time(
    service: Service, human: Binding
) -> None:
    out = write(
        service,
        human,
        [new("a", "A", [link("r", local=f"n{i}") for i in range(3)])]
        + [new(f"n{i}", f"N{i}") for i in range(3)],
    )
    a = out["a"].atom_id
    cursor = service.inspect(human, InspectRequest(a, limit=2)).cursor
    assert cursor
    assert len(service.inspect(human, InspectRequest(a, limit=2, cursor=cursor)).neighbors) == 1
    changed: list[dict[str, Any]] = [
        {"limit": 1},
        {"limit": 2, "roles": ["r"]},
        {"limit": 2, "direction": "outgoing"},
        {"limit": 2, "version": "logical"},
        {"limit": 2, "rev": 1},
        {"limit": 2, "range_start": 0},
    ]
    for options in changed:
        err = error_of(service.inspect, human, InspectRequest(a, cursor=cursor, **options))
        assert err.code == "CURSOR_EXPIRED", options
    other_actor = Binding(human.subject, human.policy, "human", "bob")
    assert error_of(
        service.inspect, other_actor, InspectRequest(a, limit=2, cursor=cursor)
    ).code == ("CURSOR_EXPIRED")
    assert error_of(
        service.inspect, human, InspectRequest(out["n0"].atom_id, limit=2, cursor=cursor)
    ).code == ("CURSOR_EXPIRED")
    forged = cursor[:-4] + ("AAAA" if not cursor.endswith("AAAA") else "BBBB")
    assert (
        error_of(service.inspect, human, InspectRequest(a, limit=2, cursor=forged)).code
        == "CURSOR_EXPIRED"
    )
    later = service_for(
        service.settings,
        service.db,
        service.embedder,
        service.tokenizer,
        clock=lambda: time.time() + service.settings.lifetimes.cursor_lifetime_s + 1,
    )
    assert (
        error_of(later.inspect, human, InspectRequest(a, limit=2, cursor=cursor)).code
        == "CURSOR_EXPIRED"
    )


# ----------------------------------------------------------------------- CUR-3


@pytest.mark.req("CUR-3")
def test_diagnostics_have_the_four_parts(service: Service, human: Binding) -> None:
    a = write(service, human, [new("a", "A")])["a"]
    diagnostics = service.inspect(human, InspectRequest(a.atom_id)).diagnostics
    assert {"acquisition", "validation", "evaluation", "selection"} <= set(diagnostics)
    assert diagnostics["evaluation"]["numeric"] is False
    assert diagnostics["selection"]["returned"] == 0
    assert diagnostics["acquisition"]["evaluatedAt"] > 0


# ----------------------------------------------------------------------- range


@pytest.mark.req("INS-1")
def test_byte_range_never_splits_a_utf8_character() -> None:
    text = "aé€😀z"  # 1 + 2 + 3 + 4 + 1 bytes
    assert byte_range(text, 0, 3)[0] == "aé"
    assert byte_range(text, 2, 6)[0] == "€"  # start moves forward past é's tail
    part, facts = byte_range(text, 1, 5)  # end inside €: shrinks back to 3
    assert part == "é" and facts.returned == (1, 3)
    assert byte_range(text, 7, 8)[0] == ""  # inside 😀 only: empty, never a fragment
    assert byte_range(text, 0, 100)[0] == text
    assert byte_range("x" * 10_000, 5, None)[1].to_json()["returned"] == {
        "start": 5,
        "end": 5 + DEFAULT_RANGE_BYTES,
    }
    for bad in [(-1, 2), (3, 2), (12, 13), (0, 1024 * 1024 + 1)]:
        with pytest.raises(GraphsvcError) as info:
            byte_range(text, *bad)
        assert info.value.code == "INVALID_INPUT"


@pytest.mark.req("INS-1", "API-6")
def test_range_returns_part_of_the_body_over_http(
    live_server: Any, service: Service, human: Binding
) -> None:
    a = write(service, human, [new("a", "Grüße aus Köln")])["a"]
    token = live_server.token_for(human)
    body = live_server.gql(
        INSPECT, {"atomId": a.atom_id, "rangeStart": 2, "rangeEnd": 6}, token=token
    )
    assert "errors" not in body, body
    result = body["data"]["inspect"]
    assert result["atom"]["text"] == "üß"  # G r ü ß: bytes 2..6
    assert result["diagnostics"]["selection"]["range"]["returned"] == {"start": 2, "end": 6}
    inside = live_server.gql(
        INSPECT, {"atomId": a.atom_id, "rangeStart": 3, "rangeEnd": 6}, token=token
    )["data"]["inspect"]
    assert inside["atom"]["text"] == "ß"  # start 3 is inside ü: moved forward to 4
    bad = live_server.gql(
        INSPECT, {"atomId": a.atom_id, "rangeStart": 5, "rangeEnd": 1}, token=token
    )
    assert bad["errors"][0]["extensions"]["code"] == "INVALID_INPUT"


# ----------------------------------------------------------------------- CLI

_HARNESS = """
import argparse, sys
from graphsvc.cli.inspect import register
from graphsvc.settings import Settings
parser = argparse.ArgumentParser(prog="graphsvc")
register(parser.add_subparsers(dest="command", required=True))
args = parser.parse_args(sys.argv[1:])
sys.exit(args.handler(args, Settings.from_env()))
"""


@pytest.mark.req("API-4", "INS-1")
def test_cli_inspect_prints_json(
    service: Service, human: Binding, test_settings: Settings, tmp_path: Path
) -> None:
    out = write(
        service,
        human,
        [new("a", "A", [link("x", local="b"), link("y", local="c")]), new("b", "B"), new("c", "C")],
    )
    env = {
        **os.environ,
        "GRAPHSVC_NEO4J_URI": test_settings.neo4j.uri,
        "GRAPHSVC_STATE_DIR": str(tmp_path),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _HARNESS,
            "inspect",
            out["a"].atom_id,
            "--subject",
            human.subject,
            "--role",
            "y",
            "--direction",
            "outgoing",
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["atom"]["atomId"] == out["a"].atom_id and doc["atom"]["text"] == "A"
    assert [n["atom"]["atomId"] for n in doc["neighbors"]] == [out["c"].atom_id]
    assert doc["neighbors"][0]["via"] == [
        {"direction": "outgoing", "role": "y", "at": "observed", "required": False}
    ]
    assert doc["readEligibility"]["eligible"] is True and doc["cursor"] is None
