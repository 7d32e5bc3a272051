"""Read replay (docs/time-travel.md): ``manifest(id)`` after a revise, a retire and a
purge of presented atoms, on a real Neo4j with real embeddings."""

from __future__ import annotations

from typing import Any

import pytest
from graph_support import gql_ok
from write_support import frozen_clock, new, ref, retire, revise, write

from graphsvc.core.binding import Binding
from graphsvc.core.requests import ReadRequest
from graphsvc.service import Service

REPLAY = """
query($id: ID!) {
  manifest(id: $id) {
    manifestId expired expiresAt acknowledged sameSetToday actor { kind id }
    presented {
      ref { atomId rev } state text tokens changedSince headRev
      citations { uri version }
    }
  }
}
"""


def _by_atom(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["ref"]["atomId"]: p for p in data["manifest"]["presented"]}


@pytest.mark.req("MAN-1", "WR-4", "LNK-2")
def test_replay_after_a_revise_a_retire_and_a_purge(service: Service, human: Binding) -> None:
    cite = {"uri": "https://example.org/otters", "version": "2"}
    made = write(
        service,
        human,
        [
            new("a", "Otters hold hands while they sleep.", sources=[cite]),
            new("b", "Otters keep a favourite stone in a pouch."),
            new("c", "Otters eat sea urchins on their bellies."),
        ],
    ).changes
    a, b, c = made["a"], made["b"], made["c"]
    read = service.read(human, ReadRequest("what do otters do", 4096))
    manifest_id = read.manifest["id"]
    presented = {r["atomId"] for r in read.manifest["presentation"]["revisions"]}
    assert presented == {a.atom_id, b.atom_id, c.atom_id}

    first = gql_ok(service, human, REPLAY, id=manifest_id)
    assert first["manifest"]["expired"] is False and first["manifest"]["sameSetToday"] is None
    now = _by_atom(first)
    assert now[a.atom_id]["text"] == "Otters hold hands while they sleep."
    assert now[a.atom_id]["tokens"] > 0
    assert now[a.atom_id]["citations"] == [{"uri": "https://example.org/otters", "version": "2"}]
    assert {p["changedSince"] for p in now.values()} == {"UNCHANGED"}

    write(service, human, [revise("a", ref(a), "Otters hold paws while they sleep.")])
    write(service, human, [retire("b", ref(b))])
    later = _by_atom(gql_ok(service, human, REPLAY, id=manifest_id))
    # The text as presented, not today's.
    assert later[a.atom_id]["text"] == "Otters hold hands while they sleep."
    assert (later[a.atom_id]["changedSince"], later[a.atom_id]["headRev"]) == ("HEAD_MOVED", 2)
    assert (later[b.atom_id]["changedSince"], later[b.atom_id]["headRev"]) == ("RETIRED", 2)
    assert later[c.atom_id]["changedSince"] == "UNCHANGED"
    replay = gql_ok(service, human, REPLAY, id=manifest_id)["manifest"]
    assert replay["sameSetToday"] is False

    # Past its lifetime the manifest says so.
    with frozen_clock(service) as clock:
        clock[0] += service.settings.lifetimes.manifest_lifetime_s + 1
        assert gql_ok(service, human, REPLAY, id=manifest_id)["manifest"]["expired"] is True

    # Purge is erasure: the manifest that presented the purged atom goes with it, and
    # nothing of it is shown to anyone.
    service.purge(human, c.atom_id)
    assert gql_ok(service, human, REPLAY, id=manifest_id)["manifest"] is None


@pytest.mark.req("MAN-1", "API-2")
def test_another_subjects_manifest_is_null(service: Service, human: Binding) -> None:
    write(service, human, [new("a", "Badgers dig setts under hedgerows.")])
    manifest_id = service.read(human, ReadRequest("badgers", 4096)).manifest["id"]
    other = Binding(f"{human.subject}-other", "default", "human", "mallory")
    assert gql_ok(service, other, REPLAY, id=manifest_id)["manifest"] is None
    assert gql_ok(service, human, REPLAY, id="no-such-manifest")["manifest"] is None
