"""Time travel (docs/time-travel.md): the typed graph, inspect and lineageGraph ``asOf``.

One story on a real Neo4j, written on a frozen clock so each event has a known time:
T and N are created, A is written linking T (observed and logical) and N (logical),
T is revised, A is revised three times and retired, and N is purged. Every instant
between two events is one row of the table: what ``atom(asOf)``, its links,
revisions, ``incoming``, ``atoms(asOf)`` and ``inspect(asOf)`` answer then.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from graph_support import codes, gql, gql_ok
from write_support import frozen_clock, new, ref, retire, revise, write

from graphsvc.api.graph_ids import encode_id
from graphsvc.core.binding import Binding
from graphsvc.service import Service

ATOM = """
query($id: ID!, $t: DateTime) {
  atom(atomId: $id, asOf: $t) {
    atomId state
    head {
      rev state text head
      links { edges { node {
        role at unavailable
        target {
          __typename
          ... on Revision { atomId rev text isHead: head }
          ... on Atom { atomId head { rev text } }
        }
      } } }
      citations { source { uri } }
    }
    revisions { edges { node { rev head } } }
  }
}
"""

INCOMING = """
query($id: ID!, $t: DateTime) {
  atom(atomId: $id, asOf: $t) {
    incoming { edges { node { role at from { atomId rev } } } }
  }
}
"""

ATOMS = """
query($t: DateTime) {
  atoms(asOf: $t, first: 50) { edges { node { atomId state head { rev } } } }
}
"""

INSPECT = """
query($id: ID!, $t: DateTime) {
  inspect(atomId: $id, asOf: $t) {
    atom { atomId rev state text head }
    neighbors { atom { atomId rev text } via { direction role at } }
    diagnostics
  }
}
"""

LINEAGE = """
query($id: ID!, $t: DateTime) {
  lineageGraph(atomId: $id, asOf: $t) { nodes { atomId rev state } edges { kind role } }
}
"""


@dataclass
class Story:
    base: float
    a: str
    t: str
    n: str


def _at(base: float, seconds: float) -> str:
    return datetime.fromtimestamp(base + seconds, UTC).isoformat()


def _story(service: Service, human: Binding) -> Story:
    """Events at base+10 … base+80 (see the module docstring)."""
    with frozen_clock(service) as now:
        base = float(int(now[0]))
        now[0] = base + 10
        first = write(service, human, [new("t", "T one"), new("n", "N one")]).changes
        t1, n1 = first["t"], first["n"]

        def links(t_rev: int) -> list[dict[str, Any]]:
            return [
                {"role": "pins", "target": {"ref": ref(t1.atom_id, 1), "at": "observed"}},
                {"role": "follows", "target": {"ref": ref(t1.atom_id, t_rev), "at": "logical"}},
                {"role": "near", "target": {"ref": ref(n1), "at": "logical"}},
            ]

        now[0] = base + 20
        a1 = write(service, human, [new("a", "A one", links=links(1))]).changes["a"]
        now[0] = base + 30
        write(service, human, [revise("t", ref(t1), "T two")])
        for i, text in enumerate(["A two", "A three", "A four"], start=2):
            now[0] = base + 30 + 10 * (i - 1)
            write(service, human, [revise("a", ref(a1.atom_id, i - 1), text, links=links(2))])
        now[0] = base + 70
        write(service, human, [retire("a", ref(a1.atom_id, 4))])
        now[0] = base + 80
        service.purge(human, n1.atom_id)
    return Story(base, a1.atom_id, t1.atom_id, n1.atom_id)


# (seconds after base, A's head rev/state/text or None, T's head rev as of then or None)
ROWS = [
    (5, None, None),
    (15, None, 1),
    (25, (1, "ACTIVE", "A one"), 1),
    (35, (1, "ACTIVE", "A one"), 2),
    (45, (2, "ACTIVE", "A two"), 2),
    (55, (3, "ACTIVE", "A three"), 2),
    (65, (4, "ACTIVE", "A four"), 2),
    (75, (5, "RETIRED", "A four"), 2),
    (85, (5, "RETIRED", "A four"), 2),
]


@pytest.mark.req("API-6", "INS-3", "LNK-2")
def test_every_instant_between_the_events_answers_as_the_graph_stood(
    service: Service, human: Binding
) -> None:
    s = _story(service, human)
    t_text = {1: "T one", 2: "T two"}
    for seconds, a_head, t_head in ROWS:
        at = _at(s.base, seconds)
        atom = gql_ok(service, human, ATOM, id=s.a, t=at)["atom"]
        target = gql_ok(service, human, ATOM, id=s.t, t=at)["atom"]
        listed = {
            e["node"]["atomId"]: (e["node"]["state"], e["node"]["head"]["rev"])
            for e in gql_ok(service, human, ATOMS, t=at)["atoms"]["edges"]
        }
        # N was purged: it is never listed, at no instant (purge is erasure).
        assert s.n not in listed, seconds
        assert gql_ok(service, human, ATOM, id=s.n, t=at)["atom"] is None, seconds
        if t_head is None:
            assert target is None and listed == {}, seconds
        else:
            assert (target["head"]["rev"], target["head"]["text"]) == (t_head, t_text[t_head])
            assert listed[s.t] == ("ACTIVE", t_head), seconds
        if a_head is None:
            assert atom is None and s.a not in listed, seconds
            continue
        rev, state, text = a_head
        head = atom["head"]
        assert (atom["state"], head["rev"], head["state"], head["text"]) == (
            state,
            rev,
            state,
            text,
        ), seconds
        assert head["head"] is True
        assert listed[s.a] == (state, rev), seconds
        revs = [e["node"] for e in atom["revisions"]["edges"]]
        assert [r["rev"] for r in revs] == list(range(rev, 0, -1)), seconds
        assert [r["head"] for r in revs] == [True] + [False] * (rev - 1), seconds
        pins, follows, near = (e["node"] for e in head["links"]["edges"])
        # Observed: the pinned revision, whatever the time; head as of then or not.
        assert pins["target"] == {
            "__typename": "Revision",
            "atomId": s.t,
            "rev": 1,
            "text": "T one",
            "isHead": t_head == 1,
        }, seconds
        # Logical: the target's head as of then.
        assert follows["target"]["__typename"] == "Atom"
        assert follows["target"]["head"] == {"rev": t_head, "text": t_text[t_head]}, seconds
        # The purged neighbour is unavailable at every instant, even before its purge.
        assert (near["unavailable"], near["target"]) == (True, None), seconds
        incoming = gql_ok(service, human, INCOMING, id=s.t, t=at)["atom"]["incoming"]
        froms = sorted((e["node"]["role"], e["node"]["from"]["rev"]) for e in incoming["edges"])
        # A's head as of then holds the links T sees.
        assert froms == [("follows", rev), ("pins", rev)], seconds
        seen = gql_ok(service, human, INSPECT, id=s.a, t=at)["inspect"]
        assert (seen["atom"]["rev"], seen["atom"]["text"], seen["atom"]["head"]) == (
            rev,
            text,
            True,
        ), seconds
        hood = {(n["atom"]["atomId"], n["atom"]["rev"]) for n in seen["neighbors"]}
        assert hood == {(s.t, 1), (s.t, t_head)}, seconds
        unavailable = seen["diagnostics"]["acquisition"]["unavailable"]
        assert [u["role"] for u in unavailable] == ["near"], seconds
        graph = gql_ok(service, human, LINEAGE, id=s.a, t=at)["lineageGraph"]
        nodes = {n["atomId"]: (n["rev"], n["state"]) for n in graph["nodes"]}
        assert nodes[s.a] == (rev, state) and nodes[s.t] == (t_head, "ACTIVE"), seconds


@pytest.mark.req("API-6")
def test_without_as_of_the_graph_is_now(service: Service, human: Binding) -> None:
    s = _story(service, human)
    atom = gql_ok(service, human, ATOM, id=s.a, t=None)["atom"]
    assert (atom["state"], atom["head"]["rev"]) == ("RETIRED", 5)
    later = gql_ok(service, human, ATOM, id=s.a, t=_at(s.base, 10_000))["atom"]
    assert later["head"] == atom["head"]


@pytest.mark.req("INS-3")
def test_inspect_as_of_before_the_atom_existed_is_not_found(
    service: Service, human: Binding
) -> None:
    s = _story(service, human)
    data, errors = gql(service, human, INSPECT, id=s.a, t=_at(s.base, 15))
    assert data is None and codes(errors) == ["NOT_FOUND"]
    data, errors = gql(service, human, INSPECT, id=s.n, t=_at(s.base, 25))
    assert data is None and codes(errors) == ["NOT_FOUND"]


@pytest.mark.req("API-2", "LNK-2")
def test_as_of_never_shows_another_subjects_data_or_a_purged_atom(
    service: Service, human: Binding
) -> None:
    s = _story(service, human)
    other = Binding(f"{human.subject}-other", "default", "human", "mallory")
    mine = write(service, other, [new("m", "Mallory's own note")]).changes["m"]
    for seconds in (5, 25, 55, 85, 10_000):
        at = _at(s.base, seconds)
        for atom_id in (s.a, s.t, s.n):
            assert gql_ok(service, other, ATOM, id=atom_id, t=at)["atom"] is None
            node = gql_ok(
                service,
                other,
                "query($id: ID!, $t: DateTime) { node(id: $id, asOf: $t) { id } }",
                id=encode_id("Atom", atom_id),
                t=at,
            )
            assert node["node"] is None
        listed = gql_ok(service, other, ATOMS, t=at)["atoms"]["edges"]
        assert {e["node"]["atomId"] for e in listed} <= {mine.atom_id}
        assert gql_ok(service, human, ATOM, id=mine.atom_id, t=at)["atom"] is None
        node = gql_ok(
            service,
            human,
            "query($id: ID!, $t: DateTime) { node(id: $id, asOf: $t) { id } }",
            id=encode_id("Atom", s.n),
            t=at,
        )
        assert node["node"] is None
