"""The typed graph (docs/graphql.md): Node ids, connections, links, citations, lineage.

In-process schema execution (strawberry ``schema.execute``) against the real Neo4j
of the test session, with a real API token per caller.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from atomise_support import THREE_SENTENCES, create, service_with
from graph_support import codes, gql, gql_ok, small_graph
from write_support import cypher, new, ref, subject_counts, write

from graphsvc.api.graph_ids import encode_cursor, encode_id
from graphsvc.core.binding import Binding
from graphsvc.service import Service
from graphsvc.store.connection import Database, round_trips

TARGET = """
  target {
    __typename
    ... on Revision { atomId rev state text }
    ... on Atom { atomId state head { rev text } }
  }
"""

ATOM_WALK = (
    """
query($id: ID!) {
  atom(atomId: $id) {
    id atomId state createdAt
    head {
      id rev state text tokens digest head createdAt actor { kind id } operationId
      atom { atomId }
      links {
        edges { cursor node {
          role at required orderKey unavailable
          from { atomId rev }
"""
    + TARGET
    + """
        } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
      citations { ordinal verified range { start end unit } source { id uri version digest } }
    }
  }
}
"""
)

LINKS = (
    """
query($id: ID!) {
  atom(atomId: $id) { head { links { edges { node { role at required unavailable """
    + TARGET
    + """ } } } } }
}
"""
)


def _other(subject: str) -> Binding:
    return Binding(f"{subject}-other", "default", "human", "mallory")


def _links(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [e["node"] for e in data["atom"]["head"]["links"]["edges"]]


@pytest.mark.req("INS-3", "API-6")
def test_atom_walk_types_links_observed_to_revision_and_logical_to_atom(
    service: Service, human: Binding
) -> None:
    g = small_graph(service, human)
    atom = gql_ok(service, human, ATOM_WALK, id=g.b.atom_id)["atom"]
    assert atom["id"] == encode_id("Atom", g.b.atom_id)
    assert (atom["atomId"], atom["state"]) == (g.b.atom_id, "ACTIVE")
    head = atom["head"]
    assert head["rev"] == 1 and head["head"] is True and head["text"] == "Beta builds on alpha."
    assert head["actor"] == {"kind": "HUMAN", "id": "alice"} and head["operationId"]
    assert head["tokens"] > 0 and head["digest"].startswith("sha256:")
    assert head["atom"] == {"atomId": g.b.atom_id}
    links = [e["node"] for e in head["links"]["edges"]]
    assert [(n["role"], n["at"], n["required"]) for n in links] == [
        ("supports", "OBSERVED", False),
        ("mentions", "LOGICAL", True),
        ("supports", "LOGICAL", False),
    ]
    assert all(n["from"] == {"atomId": g.b.atom_id, "rev": 1} for n in links)
    # Observed: the pinned revision (A rev 1), even though A has moved on to rev 2.
    assert links[0]["target"] == {
        "__typename": "Revision",
        "atomId": g.a.atom_id,
        "rev": 1,
        "state": "ACTIVE",
        "text": "Alpha cites the handbook.",
    }
    # Logical: the atom, whose head is read now (INS-3).
    assert links[1]["target"] == {
        "__typename": "Atom",
        "atomId": g.a.atom_id,
        "state": "ACTIVE",
        "head": {"rev": 2, "text": "Alpha, revised."},
    }
    assert links[2]["target"]["state"] == "RETIRED"
    assert head["links"]["pageInfo"]["hasNextPage"] is False
    cites = head["citations"]
    assert [(c["source"]["uri"], c["source"]["version"]) for c in cites] == [
        (f"atom:{g.a.atom_id}", "1"),
        ("https://example.org/handbook", "3"),
    ]
    assert [c["verified"] for c in cites] == [True, False]


@pytest.mark.req("API-6")
def test_node_and_nodes_resolve_global_ids_of_every_kind(service: Service, human: Binding) -> None:
    g = small_graph(service, human)
    walk = gql_ok(service, human, ATOM_WALK, id=g.a.atom_id)["atom"]
    ids = {
        "atom": walk["id"],
        "revision": walk["head"]["id"],
        "source": gql_ok(service, human, ATOM_WALK, id=g.b.atom_id)["atom"]["head"]["citations"][1][
            "source"
        ]["id"],
    }
    q = """query($ids: [ID!]!) { nodes(ids: $ids) {
      __typename id
      ... on Atom { atomId }
      ... on Revision { atomId rev }
      ... on Source { uri version }
    } }"""
    missing = encode_id("Atom", "no-such-atom")
    got = gql_ok(service, human, q, ids=[ids["source"], missing, ids["revision"], ids["atom"]])[
        "nodes"
    ]
    assert got == [
        {
            "__typename": "Source",
            "id": ids["source"],
            "uri": "https://example.org/handbook",
            "version": "3",
        },
        None,
        {"__typename": "Revision", "id": ids["revision"], "atomId": g.a.atom_id, "rev": 2},
        {"__typename": "Atom", "id": ids["atom"], "atomId": g.a.atom_id},
    ]
    one = gql_ok(service, human, "query($id: ID!) { node(id: $id) { id } }", id=ids["revision"])
    assert one == {"node": {"id": ids["revision"]}}
    _, errors = gql(service, human, 'query { node(id: "not an id") { id } }')
    assert codes(errors) == ["INVALID_INPUT"]
    too_many = [missing] * (service.settings.graphql.max_first + 1)
    _, errors = gql(service, human, "query($ids: [ID!]!) { nodes(ids: $ids) { id } }", ids=too_many)
    assert codes(errors) == ["INVALID_INPUT"]


@pytest.mark.req("API-2")
def test_another_subjects_ids_answer_exactly_like_missing_ones(
    service: Service, human: Binding, subject: str
) -> None:
    g = small_graph(service, human)
    mine = gql_ok(service, human, ATOM_WALK, id=g.b.atom_id)["atom"]
    source_id = mine["head"]["citations"][1]["source"]["id"]
    other = _other(subject)
    q = """query($atom: ID!, $ids: [ID!]!, $uri: String!) {
      atom(atomId: $atom) { atomId }
      nodes(ids: $ids) { id }
      source(uri: $uri, version: "3") { uri }
      atoms { edges { node { atomId } } pageInfo { hasNextPage } }
    }"""
    theirs = gql_ok(
        service,
        other,
        q,
        atom=g.b.atom_id,
        ids=[mine["id"], mine["head"]["id"], source_id],
        uri="https://example.org/handbook",
    )
    never = gql_ok(
        service,
        other,
        q,
        atom="never-written",
        ids=[
            encode_id("Atom", "never-written"),
            encode_id("Revision", "never-written", 1),
            encode_id("Source", "0" * 64),
        ],
        uri="https://never.example/",
    )
    assert (
        theirs
        == never
        == {
            "atom": None,
            "nodes": [None, None, None],
            "source": None,
            "atoms": {"edges": [], "pageInfo": {"hasNextPage": False}},
        }
    )
    lineage = "query($id: ID!) { lineageGraph(atomId: $id) { root } }"
    _, theirs_err = gql(service, other, lineage, id=g.b.atom_id)
    _, never_err = gql(service, other, lineage, id="never-written")
    assert codes(theirs_err) == codes(never_err) == ["NOT_FOUND"]
    assert theirs_err[0].message.replace(g.b.atom_id, "X") == never_err[0].message.replace(
        "never-written", "X"
    )


@pytest.mark.req("LNK-2")
def test_purged_targets_take_the_unavailable_form(service: Service, human: Binding) -> None:
    x = create(service, human, "Doomed note.")
    y = write(
        service,
        human,
        [
            new(
                "y",
                "Survivor note.",
                links=[
                    {"role": "see", "target": {"ref": ref(x), "at": "observed", "orderKey": "k"}},
                    {"role": "see", "target": {"ref": ref(x), "at": "logical", "required": True}},
                ],
            )
        ],
    ).changes["y"]
    x_id = encode_id("Atom", x.atom_id)
    service.purge(human, x.atom_id)
    data = gql_ok(service, human, LINKS, id=y.atom_id)
    assert _links(data) == [
        {"role": "see", "at": "OBSERVED", "required": False, "unavailable": True, "target": None},
        {"role": "see", "at": "LOGICAL", "required": True, "unavailable": True, "target": None},
    ]
    gone = gql_ok(
        service,
        human,
        "query($a: ID!, $n: ID!) { atom(atomId: $a) { atomId } node(id: $n) { id } }",
        a=x.atom_id,
        n=x_id,
    )
    assert gone == {"atom": None, "node": None}
    everything = gql_ok(
        service, human, "query { atoms { edges { node { atomId head { text } } } } }"
    )
    assert x.atom_id not in json.dumps(everything) and "Doomed" not in json.dumps(everything)


@pytest.mark.req("WR-4", "LNK-1")
def test_retired_atoms_show_by_state_and_filter(service: Service, human: Binding) -> None:
    g = small_graph(service, human)
    q = """query($s: AtomState) { atoms(state: $s) { edges { node { atomId state
            head { state text } } } } }"""
    retired = gql_ok(service, human, q, s="RETIRED")["atoms"]["edges"]
    assert [e["node"] for e in retired] == [
        {
            "atomId": g.c.atom_id,
            "state": "RETIRED",
            "head": {"state": "RETIRED", "text": "Gamma will be retired."},
        }
    ]
    active = {e["node"]["atomId"] for e in gql_ok(service, human, q, s="ACTIVE")["atoms"]["edges"]}
    assert active == {g.a.atom_id, g.b.atom_id}
    every = gql_ok(service, human, q)["atoms"]["edges"]
    assert len(every) == 3
    text = gql_ok(service, human, 'query { atoms(text: "BETA") { edges { node { atomId } } } }')
    assert [e["node"]["atomId"] for e in text["atoms"]["edges"]] == [g.b.atom_id]


PAGE = """query($first: Int, $after: String) {
  atoms(first: $first, after: $after) {
    edges { cursor node { atomId } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}"""


@pytest.mark.req("API-3")
def test_atoms_connection_pages_first_zero_past_the_end_and_bad_cursors(
    service: Service, human: Binding
) -> None:
    made = write(service, human, [new(f"n{i}", f"Page note {i}.") for i in range(5)])
    ids = sorted(v.atom_id for v in made.changes.values())
    zero = gql_ok(service, human, PAGE, first=0)["atoms"]
    assert zero == {
        "edges": [],
        "pageInfo": {
            "hasNextPage": True,
            "hasPreviousPage": False,
            "startCursor": None,
            "endCursor": None,
        },
    }
    seen: list[str] = []
    after = None
    pages = 0
    while True:
        conn = gql_ok(service, human, PAGE, first=2, after=after)["atoms"]
        pages += 1
        seen += [e["node"]["atomId"] for e in conn["edges"]]
        assert conn["pageInfo"]["endCursor"] == conn["edges"][-1]["cursor"]
        assert conn["pageInfo"]["hasPreviousPage"] is (after is not None)
        if not conn["pageInfo"]["hasNextPage"]:
            break
        after = conn["pageInfo"]["endCursor"]
    assert seen == ids and pages == 3
    past = gql_ok(service, human, PAGE, first=2, after=encode_cursor("atoms", ids[-1]))["atoms"]
    assert past["edges"] == [] and past["pageInfo"]["hasNextPage"] is False
    for bad in ("not-a-cursor", encode_cursor("links", 3), encode_cursor("atoms", 7), ""):
        _, errors = gql(service, human, PAGE, first=2, after=bad)
        assert codes(errors) == ["INVALID_INPUT"], bad
    for first in (-1, service.settings.graphql.max_first + 1):
        _, errors = gql(service, human, PAGE, first=first)
        assert codes(errors) == ["INVALID_INPUT"], first


@pytest.mark.req("API-6")
def test_revision_history_is_a_connection_newest_first(service: Service, human: Binding) -> None:
    g = small_graph(service, human)
    q = """query($id: ID!, $after: String) { atom(atomId: $id) {
      revisions(first: 1, after: $after) {
        edges { cursor node { rev text head } } pageInfo { hasNextPage endCursor } }
      one: revision(rev: 1) { rev text head }
      none: revision(rev: 9) { rev }
    } }"""
    first = gql_ok(service, human, q, id=g.a.atom_id)["atom"]
    assert [e["node"] for e in first["revisions"]["edges"]] == [
        {"rev": 2, "text": "Alpha, revised.", "head": True}
    ]
    assert first["one"] == {"rev": 1, "text": "Alpha cites the handbook.", "head": False}
    assert first["none"] is None
    second = gql_ok(
        service, human, q, id=g.a.atom_id, after=first["revisions"]["pageInfo"]["endCursor"]
    )
    assert [e["node"]["rev"] for e in second["atom"]["revisions"]["edges"]] == [1]
    assert second["atom"]["revisions"]["pageInfo"]["hasNextPage"] is False
    _, errors = gql(service, human, q, id=g.a.atom_id, after=encode_cursor("atoms", "x"))
    assert codes(errors) == ["INVALID_INPUT"]


@pytest.mark.req("API-6")
def test_incoming_links_cited_by_and_sources(service: Service, human: Binding) -> None:
    g = small_graph(service, human)
    q = """query($id: ID!, $role: String, $at: LinkAt) { atom(atomId: $id) {
      incoming(role: $role, at: $at) { edges { node { role at from { atomId rev } target {
        __typename ... on Revision { rev } ... on Atom { atomId } } } } }
      citedBy { edges { node { citing { atomId rev } source { uri version } } } }
    } }"""
    inc = gql_ok(service, human, q, id=g.a.atom_id)["atom"]
    assert [e["node"] for e in inc["incoming"]["edges"]] == [
        {
            "role": "supports",
            "at": "OBSERVED",
            "from": {"atomId": g.b.atom_id, "rev": 1},
            "target": {"__typename": "Revision", "rev": 1},
        },
        {
            "role": "mentions",
            "at": "LOGICAL",
            "from": {"atomId": g.b.atom_id, "rev": 1},
            "target": {"__typename": "Atom", "atomId": g.a.atom_id},
        },
    ]
    assert [e["node"] for e in inc["citedBy"]["edges"]] == [
        {
            "citing": {"atomId": g.b.atom_id, "rev": 1},
            "source": {"uri": f"atom:{g.a.atom_id}", "version": "1"},
        }
    ]
    by_role = gql_ok(service, human, q, id=g.a.atom_id, role="mentions")["atom"]["incoming"]
    assert [e["node"]["role"] for e in by_role["edges"]] == ["mentions"]
    by_at = gql_ok(service, human, q, id=g.a.atom_id, at="OBSERVED")["atom"]["incoming"]
    assert [e["node"]["at"] for e in by_at["edges"]] == ["OBSERVED"]
    src = """query($v: String) { source(uri: "https://example.org/handbook", version: $v) {
      uri version digest citedBy(first: 1) { edges { node { citing { atomId }
        range { start end unit } } } pageInfo { hasNextPage } } } }"""
    # A's rev 1 cited the handbook too, but its head (rev 2) does not: only B is current.
    assert gql_ok(service, human, src, v="3")["source"] == {
        "uri": "https://example.org/handbook",
        "version": "3",
        "digest": None,
        "citedBy": {
            "edges": [{"node": {"citing": {"atomId": g.b.atom_id}, "range": None}}],
            "pageInfo": {"hasNextPage": False},
        },
    }
    assert gql_ok(service, human, src, v="4")["source"] is None


@pytest.mark.req("API-5", "SIG-1")
def test_lineage_graph_and_derivations_carry_verified_signatures(
    service: Service, human: Binding, db: Database
) -> None:
    rule = service_with(service, curator="rule")
    parent = create(rule, human, THREE_SENTENCES)
    done = rule.atomise(human, parent.atom_id, max_atom_tokens=50)
    q = """query($id: ID!) {
      lineageGraph(atomId: $id) {
        root depth truncated
        nodes { atomId kind level state atom { atomId } }
        edges { source target kind fromRev toRev keyId signedAt signatureStatus role at }
      }
      atom(atomId: $id) { revision(rev: 1) { derivedInto {
        signatureStatus keyId child { atomId rev } parent { atomId rev } } } }
    }"""
    data = gql_ok(rule, human, q, id=parent.atom_id)
    graph = data["lineageGraph"]
    assert graph["root"] == parent.atom_id and graph["truncated"] is False
    derives = [e for e in graph["edges"] if e["kind"] == "DERIVES_FROM"]
    assert sorted(e["source"] for e in derives) == sorted(done.atom_ids)
    assert {e["signatureStatus"] for e in derives} == {"VERIFIED"}
    kinds = {n["atomId"]: n["kind"] for n in graph["nodes"]}
    assert kinds[parent.atom_id] == "ROOT"
    assert {kinds[a] for a in done.atom_ids} == {"LINEAGE"}
    into = data["atom"]["revision"]["derivedInto"]
    assert sorted(d["child"]["atomId"] for d in into) == sorted(done.atom_ids)
    assert {d["signatureStatus"] for d in into} == {"VERIFIED"}
    assert {(d["parent"]["atomId"], d["parent"]["rev"]) for d in into} == {(parent.atom_id, 1)}
    # One flipped signature byte in the store: that edge, and only it, is INVALID.
    victim = done.atom_ids[0]
    cypher(
        db,
        "MATCH (c:Revision {subject: $s, atomId: $a})-[d:DERIVES_FROM]->() "
        "SET d.signature = CASE WHEN left(d.signature, 1) = '0' THEN 'f' ELSE '0' END "
        "+ substring(d.signature, 1)",
        s=human.subject,
        a=victim,
    )
    again = gql_ok(rule, human, q, id=parent.atom_id)
    status = {
        e["source"]: e["signatureStatus"]
        for e in again["lineageGraph"]["edges"]
        if e["kind"] == "DERIVES_FROM"
    }
    assert status == {a: ("INVALID" if a == victim else "VERIFIED") for a in done.atom_ids}
    child = gql_ok(
        rule,
        human,
        "query($id: ID!) { atom(atomId: $id) { head { derivesFrom { signatureStatus "
        "parent { atomId } } atomOf { atomId } } } }",
        id=victim,
    )["atom"]["head"]
    assert child == {
        "derivesFrom": [{"signatureStatus": "INVALID", "parent": {"atomId": parent.atom_id}}],
        "atomOf": {"atomId": parent.atom_id},
    }


def _walk_query(n: int) -> str:
    return (
        """query { atoms(first: FIRST, text: "holder") { edges { node { atomId
      head { rev links { edges { node { role
        target {
          ... on Revision { text citations { verified source { uri } } }
          ... on Atom { head { text citations { source { uri } } } }
        } } } } } } } } }"""
    ).replace("FIRST", str(n))


def _holders_with_cited_targets(service: Service, human: Binding, n: int) -> None:
    """``n`` holders, each linking to two of ``n + 1`` cited targets (one observed
    link, one logical)."""
    targets = write(
        service,
        human,
        [
            new(f"t{i}", f"Target {i}.", sources=[{"uri": f"https://example.org/{i}"}])
            for i in range(n + 1)
        ],
    ).changes
    write(
        service,
        human,
        [
            new(
                f"h{i}",
                f"holder {i:03d}",
                links=[
                    {"role": "a", "target": {"ref": ref(targets[f"t{i}"]), "at": "observed"}},
                    {"role": "b", "target": {"ref": ref(targets[f"t{i + 1}"]), "at": "logical"}},
                ],
            )
            for i in range(n)
        ],
    )


def test_three_level_query_over_100_atoms_runs_a_bounded_number_of_round_trips(
    service: Service, human: Binding
) -> None:
    _holders_with_cited_targets(service, human, 100)
    counts = {}
    for n in (10, 100):
        before = round_trips()
        data = gql_ok(service, human, _walk_query(n))
        counts[n] = round_trips() - before
        edges = data["atoms"]["edges"]
        assert len(edges) == n
        last = edges[-1]["node"]["head"]["links"]["edges"]
        assert last[0]["node"]["target"]["citations"][0]["source"]["uri"].startswith("https://")
        assert last[1]["node"]["target"]["head"]["citations"][0]["source"]["uri"].startswith(
            "https://"
        )
    # The purge check, the atoms page, the links (their targets' rows come along) and the
    # citations: one round trip per kind of thing per level. Whether two levels'
    # citations share a batch depends on scheduling, so the count is bounded, not fixed;
    # one round trip per field would be about 5 per atom (over 500 here).
    assert max(counts.values()) <= 6, counts


def test_targets_citations_come_with_the_links_page_when_the_query_asks_for_them(
    service: Service, human: Binding
) -> None:
    _holders_with_cited_targets(service, human, 3)
    inline = _walk_query(3)
    # The same selection through named fragments (the look-ahead follows them).
    named = """query { atoms(first: 3, text: "holder") { edges { node { atomId
      head { rev links { edges { node { role target { ...R ...A } } } } } } } } }
    fragment R on Revision { text citations { verified source { uri } } }
    fragment A on Atom { head { text ...C } }
    fragment C on Revision { citations { source { uri } } }"""
    plain = """query { atoms(first: 3, text: "holder") { edges { node { atomId
      head { rev links { edges { node { role target {
        ... on Revision { text } ... on Atom { head { text } } } } } } } } } } }"""
    answers = {}
    for name, q in (("inline", inline), ("named", named), ("plain", plain)):
        before = round_trips()
        answers[name] = gql_ok(service, human, q)
        # The purge check, the atoms page, the links page with the targets (and, when
        # asked for, the targets' citations): nothing per level after that.
        assert round_trips() - before == 3, name
    uris = [
        [
            (t.get("citations") or t["head"]["citations"])[0]["source"]["uri"]
            for t in (link["node"]["target"] for link in _links_of(edge))
        ]
        for edge in answers["inline"]["atoms"]["edges"]
    ]
    # Atoms come in atomId order: holder i's targets are t_i (observed) and t_i+1 (logical).
    expected = [[f"https://example.org/{i}", f"https://example.org/{i + 1}"] for i in range(3)]
    assert sorted(uris) == expected
    assert answers["named"] == answers["inline"]
    assert "citations" not in json.dumps(answers["plain"])
    # What the links page does not bring still loads, through the loaders: t0's atom
    # (the others came as logical targets) and the heads' citations, batched (the
    # cached heads and t0's may or may not share a batch).
    before = round_trips()
    cited = gql_ok(
        service,
        human,
        """query { atoms(first: 3, text: "holder") { edges { node {
          head { links { edges { node { target { ... on Revision { atom { head {
            citations { source { uri } } } } } } } } } } } } } }""",
    )
    assert 3 < round_trips() - before <= 6
    observed = [_links_of(e)[0]["node"]["target"] for e in cited["atoms"]["edges"]]
    assert sorted(t["atom"]["head"]["citations"][0]["source"]["uri"] for t in observed) == [
        f"https://example.org/{i}" for i in range(3)
    ]


def _links_of(edge: dict[str, Any]) -> list[dict[str, Any]]:
    links: list[dict[str, Any]] = edge["node"]["head"]["links"]["edges"]
    return links


@pytest.mark.req("CORE-2")
def test_graph_reads_change_no_body_link_or_usage_state(
    service: Service, human: Binding, db: Database
) -> None:
    g = small_graph(service, human)

    def state() -> Any:
        return (
            subject_counts(db, human.subject),
            cypher(
                db,
                "MATCH (n) WHERE n.subject = $s AND (n:Revision OR n:Atom OR n:UsageState) "
                "RETURN n {.*, embedding: null} AS n ORDER BY n.atomId, n.rev",
                s=human.subject,
            ),
        )

    before = state()
    gql_ok(service, human, ATOM_WALK, id=g.b.atom_id)
    gql_ok(service, human, _walk_query(20))
    gql_ok(
        service,
        human,
        "query { atoms { edges { node { revisions { edges { node { rev } } } "
        "incoming { edges { node { role } } } citedBy { edges { cursor } } } } } }",
    )
    assert state() == before


@pytest.mark.req("LNK-6")
def test_purge_pending_refuses_every_graph_root(
    service: Service, human: Binding, db: Database
) -> None:
    g = small_graph(service, human)
    cypher(db, "CREATE (:PurgeMarker {subject: $s, atomId: 'x', step: 'test'})", s=human.subject)
    try:
        for q in (
            "query($id: ID!) { atom(atomId: $id) { atomId } }",
            "query($id: ID!) { node(id: $id) { id } }",
            "query($id: ID!) { nodes(ids: [$id]) { id } }",
            "query { atoms { edges { cursor } } }",
            'query { source(uri: "https://example.org/handbook", version: "3") { uri } }',
            "query($id: ID!) { lineageGraph(atomId: $id) { root } }",
        ):
            var = encode_id("Atom", g.a.atom_id) if "node" in q else g.a.atom_id
            variables = {"id": var} if "$id" in q else {}
            data, errors = gql(service, human, q, **variables)
            assert codes(errors) == ["PURGE_PENDING"], q
            assert g.a.atom_id not in json.dumps(data)
        # The check runs beside a root's first load; its refusal still wins over the
        # root's own errors (an id that does not decode), as when it ran first.
        _, errors = gql(service, human, 'query { node(id: "not-an-id") { id } }')
        assert codes(errors) == ["PURGE_PENDING"]
    finally:
        cypher(db, "MATCH (p:PurgeMarker {subject: $s}) DELETE p", s=human.subject)


@pytest.mark.req("API-3")
def test_cost_limit_refuses_before_any_round_trip(service: Service, human: Binding) -> None:
    heavy = """query($n: Int) { atoms(first: $n) { edges { node {
      revisions(first: $n) { edges { node { links(first: $n) { edges { node { role } } } } } }
    } } } }"""
    before = round_trips()
    data, errors = gql(service, human, heavy, n=100)
    assert round_trips() == before
    assert data is None and codes(errors) == ["QUERY_TOO_COMPLEX"]
    details = (errors[0].extensions or {})["details"]
    assert details["cost"] > details["maxCost"] == service.settings.graphql.max_cost
    # The same shape with small pages is cheap enough to run.
    assert gql_ok(service, human, heavy, n=3)["atoms"]["edges"] == []
    # The maximum is configuration: a strict deployment refuses an ordinary page.
    strict = service_with(service, max_query_cost=50)
    _, errors = gql(strict, human, "query { atoms(first: 60) { edges { cursor } } }")
    assert codes(errors) == ["QUERY_TOO_COMPLEX"]
    assert not gql(strict, human, "query { atoms(first: 10) { edges { cursor } } }")[1]


@pytest.mark.req("API-2")
def test_graph_roots_need_a_token(service: Service) -> None:
    data, errors = gql(service, None, "query { atoms { edges { cursor } } }")
    assert data is None and codes(errors) == ["UNAUTHENTICATED"]
    _, errors = gql(service, None, f'query {{ atom(atomId: "{uuid.uuid4().hex}") {{ atomId }} }}')
    assert codes(errors) == ["UNAUTHENTICATED"]


@pytest.mark.req("API-6")
def test_nested_connections_page_one_edge_at_a_time(service: Service, human: Binding) -> None:
    g = small_graph(service, human)
    q = """query($id: ID!, $b: ID!, $in: String, $out: String) {
      a: atom(atomId: $id) { incoming(first: 1, after: $in) {
        edges { node { role at } } pageInfo { hasNextPage endCursor } } }
      b: atom(atomId: $b) { head { links(first: 1, after: $out) {
        edges { node { role at } } pageInfo { hasNextPage endCursor } } } }
    }"""
    incoming: list[tuple[str, str]] = []
    outgoing: list[tuple[str, str]] = []
    cursor_in = cursor_out = None
    for _ in range(3):
        data = gql_ok(
            service, human, q, id=g.a.atom_id, b=g.b.atom_id, **{"in": cursor_in}, out=cursor_out
        )
        inc, out = data["a"]["incoming"], data["b"]["head"]["links"]
        incoming += [(e["node"]["role"], e["node"]["at"]) for e in inc["edges"]]
        outgoing += [(e["node"]["role"], e["node"]["at"]) for e in out["edges"]]
        cursor_in, cursor_out = inc["pageInfo"]["endCursor"], out["pageInfo"]["endCursor"]
        if not out["pageInfo"]["hasNextPage"]:
            break
        assert len(inc["edges"]) <= 1 and len(out["edges"]) == 1
    assert incoming == [("supports", "OBSERVED"), ("mentions", "LOGICAL")]
    assert outgoing == [("supports", "OBSERVED"), ("mentions", "LOGICAL"), ("supports", "LOGICAL")]
