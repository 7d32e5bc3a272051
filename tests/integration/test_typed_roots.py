"""The typed siblings of the JSON fields SPEC API-6 fixes (issue 51), over real HTTP
against the real Neo4j: ``healthTyped``, ``recordUseTyped``, ``purgeTyped``,
``atomiseTyped``, ``setNamespacePolicyTyped``, inspect's ``receiptInfo``,
``readEligibilityInfo`` and ``usageInfo``, and ``AtomView.citations``. Each must say
what its JSON field says: every JSON key, the same value."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from atomise_support import THREE_SENTENCES, create, service_with
from conftest import LiveServer
from graph_support import small_graph
from serve_support import serving

from graphsvc.core.binding import Binding
from graphsvc.http.app import create_app
from graphsvc.keys.auth import AuthTable
from graphsvc.service import Service

BUDGET = 50  # with THREE_SENTENCES the rule curator makes exactly three atoms
UTC_Z = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def _ok(server: LiveServer, token: str | None, query: str, **variables: Any) -> dict[str, Any]:
    body = server.gql(query, variables, token=token)
    assert not body.get("errors"), body
    data = body["data"]
    assert isinstance(data, dict)
    return data


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _given(doc: dict[str, Any]) -> dict[str, Any]:
    """The keys that hold a value (a typed field is null where its JSON leaves a key out)."""
    return {k: v for k, v in doc.items() if v is not None}


@pytest.fixture(scope="module")
def rule_server(service: Service) -> Iterator[LiveServer]:
    """A second server on the same database with the rule curator (atomise needs one)."""
    auth = AuthTable({})
    with serving(create_app(service_with(service, curator="rule"), auth)) as url:
        yield LiveServer(url=url, auth=auth)


@pytest.mark.req("API-6")
def test_health_typed_says_what_health_says_without_a_token(live_server: LiveServer) -> None:
    data = _ok(
        live_server,
        None,
        """{ health healthTyped { status schemaVersion neo4jAgeS tokenizer curator
             neo4j { name version edition } embedding { model dimension queryRuntime }
             entities { extractor } } }""",
    )
    raw, typed = data["health"], data["healthTyped"]
    assert set(typed) == set(raw)
    # The age of the kept Neo4j facts may tick between the two fields of one request.
    assert isinstance(typed["neo4jAgeS"], float) and typed["neo4jAgeS"] >= 0.0
    assert {**typed, "neo4jAgeS": None} == {**raw, "neo4jAgeS": None}
    assert typed["status"] == "ok" and typed["embedding"]["dimension"] > 0


def _manifest(server: LiveServer, token: str) -> dict[str, Any]:
    """The manifest of one read of the small graph."""
    query = 'query { read(query: "alpha handbook", memoryTokenBudget: 2000) { manifest } }'
    manifest: dict[str, Any] = _ok(server, token, query)["read"]["manifest"]
    return manifest


@pytest.mark.req("API-6", "AV-4", "INS-2", "LNK-3")
def test_record_use_and_inspect_siblings_say_what_their_json_says(
    service: Service, human: Binding, live_server: LiveServer
) -> None:
    g = small_graph(service, human)
    token = live_server.token_for(human)
    manifest = _manifest(live_server, token)
    record = "mutation($e: ID!, $m: JSON!) { recordUse(eventId: $e, manifest: $m) }"
    typed = (
        "mutation($e: ID!, $m: JSON!) { recordUseTyped(eventId: $e, manifest: $m) "
        "{ eventId repeated updated } }"
    )
    first, second = f"ev-{uuid.uuid4().hex}", f"ev-{uuid.uuid4().hex}"
    fresh = _ok(live_server, token, record, e=first, m=manifest)["recordUse"]
    fresh_typed = _ok(live_server, token, typed, e=second, m=manifest)["recordUseTyped"]
    assert fresh == {"eventId": first, "repeated": False, "updated": fresh["updated"]}
    assert fresh["updated"] >= 1
    assert fresh_typed == {**fresh, "eventId": second}
    # The same event again: both shapes answer the repeat alike.
    again = _ok(live_server, token, record, e=second, m=manifest)["recordUse"]
    again_typed = _ok(live_server, token, typed, e=first, m=manifest)["recordUseTyped"]
    assert again["repeated"] is True and again_typed == {**again, "eventId": first}

    presented = {r["atomId"] for r in manifest["presentation"]["revisions"]}
    assert g.b.atom_id in presented or g.a2.atom_id in presented
    used = g.b.atom_id if g.b.atom_id in presented else g.a2.atom_id
    for atom_id in (used, g.b.atom_id, g.c.atom_id):
        _inspect_siblings_match(live_server, token, atom_id)


def _lower_unit(r: dict[str, Any] | None) -> dict[str, Any] | None:
    """A typed range's enum unit (BYTE) as its JSON spells it (byte)."""
    return None if r is None else {**r, "unit": r["unit"].lower()}


def _inspect_siblings_match(server: LiveServer, token: str, atom_id: str) -> None:
    data = _ok(
        server,
        token,
        """query($id: ID!) { inspect(atomId: $id) {
          receipt readEligibility usage
          receiptInfo { receipt kind atomId rev digest evaluatedAt expiresAt }
          readEligibilityInfo { eligible reasons eligibleWithIncludeArchived checked }
          usageInfo { modelId policy value evaluatedAt state { mass halfLifeS lastAt uses } }
          atom { ...cited } neighbors { atom { ...cited } }
        } }
        fragment cited on AtomView {
          sources citations { uri version digest verified range { start end unit } }
        }""",
        id=atom_id,
    )["inspect"]
    assert data["receiptInfo"] == data["receipt"]
    assert data["readEligibilityInfo"] == data["readEligibility"]
    usage, info = data["usage"], data["usageInfo"]
    if usage is None:
        assert info is None
    else:
        assert {**info, "state": _given(info["state"])} == usage
    for view in [data["atom"], *(n["atom"] for n in data["neighbors"])]:
        citations = [_given({**c, "range": _lower_unit(c["range"])}) for c in view["citations"]]
        assert citations == view["sources"]


@pytest.mark.req("API-6")
def test_inspect_siblings_cover_usage_citations_and_ineligibility(
    service: Service, human: Binding, live_server: LiveServer
) -> None:
    """What the matching test compares is not empty: a used revision has usage, a
    citation has a range, a superseded revision is not eligible."""
    g = small_graph(service, human)
    token = live_server.token_for(human)
    manifest = _manifest(live_server, token)
    _ok(
        live_server,
        token,
        "mutation($e: ID!, $m: JSON!) { recordUseTyped(eventId: $e, manifest: $m) { updated } }",
        e=f"ev-{uuid.uuid4().hex}",
        m=manifest,
    )
    used = manifest["presentation"]["revisions"][0]
    q = """query($id: ID!, $rev: Int) { inspect(atomId: $id, rev: $rev) {
      readEligibilityInfo { eligible reasons } usageInfo { modelId state { uses } }
      atom { citations { uri range { unit } } } } }"""
    now = _ok(live_server, token, q, id=used["atomId"], rev=used["rev"])["inspect"]
    assert now["usageInfo"]["modelId"] == "adaptiveUse" and now["usageInfo"]["state"]["uses"] == 1
    old = _ok(live_server, token, q, id=g.a.atom_id, rev=g.a.rev)["inspect"]
    assert old["readEligibilityInfo"] == {"eligible": False, "reasons": ["superseded"]}
    assert old["atom"]["citations"][0]["range"]["unit"] == "BYTE"
    _inspect_siblings_match(live_server, token, g.a.atom_id)


@pytest.mark.req("API-6", "ATM-8")
def test_set_namespace_policy_typed_says_what_its_json_says(
    human: Binding, live_server: LiveServer
) -> None:
    token = live_server.token_for(human)
    fields = (
        "autoAtomise autoAtomiseMode autoAtomiseThresholdCl100k autoAtomiseMaxAtomTokens "
        "autoAtomiseMaxRetries resolvedMode"
    )
    for policy in ({"auto_atomise_mode": "synchronous"}, {"auto_atomise": True}, {}):
        raw = _ok(
            live_server, token, "mutation($p: JSON!) { setNamespacePolicy(policy: $p) }", p=policy
        )["setNamespacePolicy"]
        typed = _ok(
            live_server,
            token,
            f"mutation($p: JSON!) {{ setNamespacePolicyTyped(policy: $p) {{ {fields} }} }}",
            p=policy,
        )["setNamespacePolicyTyped"]
        modes = ("autoAtomiseMode", "resolvedMode")
        as_json = {k: v.lower() if k in modes and v else v for k, v in typed.items()}
        assert as_json == {_camel(k): v for k, v in raw.items()}
    assert raw["resolvedMode"] is None and typed["resolvedMode"] is None


@pytest.mark.req("API-6", "LNK-5")
def test_purge_typed_says_what_purge_says(
    service: Service, human: Binding, live_server: LiveServer
) -> None:
    token = live_server.token_for(human)
    one = create(service, human, "The first of two twins, erased through the JSON field.")
    two = create(service, human, "The second of two twins, erased through the typed field.")
    raw = _ok(live_server, token, "mutation($id: ID!) { purge(atomId: $id) }", id=one.atom_id)[
        "purge"
    ]
    typed = _ok(
        live_server,
        token,
        "mutation($id: ID!) { purgeTyped(atomId: $id) { atomId purged revisions inputs resumed } }",
        id=two.atom_id,
    )["purgeTyped"]
    assert set(typed) == set(raw)
    assert raw["purged"] == [one.atom_id] and typed["purged"] == [two.atom_id]
    assert {**typed, "atomId": None, "purged": None} == {**raw, "atomId": None, "purged": None}


_ATOMISE_TYPED = """mutation($id: ID!, $t: Int) { atomiseTyped(atomId: $id, maxAtomTokens: $t) {
  alreadyAtomised sourceId atomIds atomCount archivedAt droppedCount truncatedCount warnings
  informational sourceRev archiveRev eventSequence operationId } }"""
_ATOMISE = "mutation($id: ID!, $t: Int) { atomise(atomId: $id, maxAtomTokens: $t) }"


@pytest.mark.req("API-6", "ATM-8")
def test_atomise_typed_says_what_atomise_says_in_each_shape(
    service: Service, human: Binding, rule_server: LiveServer
) -> None:
    token = rule_server.token_for(human)
    one, two = create(service, human, THREE_SENTENCES), create(service, human, THREE_SENTENCES)
    raw = _ok(rule_server, token, _ATOMISE, id=one.atom_id, t=BUDGET)["atomise"]
    typed = _ok(rule_server, token, _ATOMISE_TYPED, id=two.atom_id, t=BUDGET)["atomiseTyped"]
    assert set(_given(raw)) == set(_given(typed)) - {"alreadyAtomised"}
    assert typed["alreadyAtomised"] is False and typed["informational"] is None
    assert UTC_Z.fullmatch(typed["archivedAt"]) and UTC_Z.fullmatch(raw["archivedAt"])
    same = ("atomCount", "droppedCount", "truncatedCount", "warnings", "sourceRev", "archiveRev")
    assert {k: typed[k] for k in same} == {k: raw[k] for k in same} and raw["atomCount"] == 3
    # Already atomised: the same atom asked again, through each field.
    again = _ok(rule_server, token, _ATOMISE, id=two.atom_id, t=None)["atomise"]
    again_typed = _ok(rule_server, token, _ATOMISE_TYPED, id=two.atom_id, t=None)["atomiseTyped"]
    assert again["alreadyAtomised"] is True and again["atomIds"] == typed["atomIds"]
    assert _given(again_typed) == again and set(again) <= set(again_typed)
    # Too small to split: nothing changes, so both fields answer the same atom alike.
    small = create(service, human, "Too short to split.")
    tiny = _ok(rule_server, token, _ATOMISE, id=small.atom_id, t=BUDGET)["atomise"]
    tiny_typed = _ok(rule_server, token, _ATOMISE_TYPED, id=small.atom_id, t=BUDGET)
    assert tiny["informational"] == "source_too_small"
    assert _given(tiny_typed["atomiseTyped"]) == {**_given(tiny), "alreadyAtomised": False}
