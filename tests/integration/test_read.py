"""``read`` end to end (SPEC §8–§10) against a real Neo4j, embedder and tokenizer.

Each test writes its own small corpus in a fresh subject through ``service.write``
and reads it back through ``service.read`` (and once over GraphQL/HTTP). Probes of
what is stored (PRESENTED links, acknowledged manifests) go to Neo4j directly.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from neo4j import RoutingControl

from graphsvc.core.binding import Binding
from graphsvc.core.requests import ReadRequest
from graphsvc.errors import GraphsvcError
from graphsvc.inputs.models import parse_changes, parse_host_input
from graphsvc.ops.read import ReadResult
from graphsvc.process_state.head_mirrors import forget_mirrors
from graphsvc.runtime import service_for
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.tokenizer import count_tokens

# --------------------------------------------------------------------------- helpers


def create(service: Service, binding: Binding, *specs: dict[str, Any]) -> dict[str, Any]:
    """Create atoms in one batch; returns change id -> AtomView."""
    changes = []
    for spec in specs:
        change: dict[str, Any] = {
            "id": spec["id"],
            "op": "create",
            "content": {"text": spec["text"], "links": spec.get("links", [])},
            "sources": spec.get("sources", []),
        }
        if "input" in spec:
            change["input"] = spec["input"]
        changes.append(change)
    out = service.write(binding, parse_changes(changes))
    return dict(out.changes)


def change(service: Service, binding: Binding, op: str, view: Any, text: str = "") -> Any:
    """Revise (new text) or retire one atom at its current rev; returns the new view."""
    c: dict[str, Any] = {"id": "x", "op": op, "target": {"atomId": view.atom_id, "rev": view.rev}}
    if op == "revise":
        c["content"] = {"text": text, "links": []}
        c["sources"] = []
    return service.write(binding, parse_changes([c])).changes["x"]


def req(local: str, at: str = "observed") -> dict[str, Any]:
    """A required link to a change of the same batch."""
    return {"role": "needs", "target": {"local": local, "required": True, "at": at}}


def req_ref(view: Any, at: str = "observed") -> dict[str, Any]:
    """A required link to a stored atom."""
    return {
        "role": "needs",
        "target": {"atomId": view.atom_id, "rev": view.rev, "required": True, "at": at},
    }


def key(view: Any) -> str:
    return f"{view.atom_id}@{view.rev}"


def memory(result: ReadResult) -> list[dict[str, Any]]:
    """The parsed ``memory`` views of the read text."""
    if not result.text:
        return []
    doc = json.loads(result.text)
    views: list[dict[str, Any]] = doc["memory"]
    return views


def memory_refs(result: ReadResult) -> list[str]:
    return [v["ref"] for v in memory(result)]


def item_keys(result: ReadResult, *, blocked: bool | None = None) -> list[str]:
    return [i.ref.key for i in result.items if blocked is None or i.blocked is blocked]


def root_keys(result: ReadResult) -> list[str]:
    return [i.ref.key for i in result.items if i.role == "root"]


def cypher(service: Service, text: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = service.db.driver.execute_query(
        text, params, database_=service.db.database, routing_=RoutingControl.WRITE
    )
    forget_mirrors(service.db)  # a direct edit moves no generation the mirrors follow
    return [r.data() for r in records]


def observe(service: Service, binding: Binding, **host_input: Any) -> str:
    host_input.setdefault("payloadDigest", "sha256:" + "0" * 64)
    return service.observe(binding, parse_host_input(host_input))


def walk_keys(doc: Any) -> Iterator[str]:
    """Every object key anywhere in a parsed JSON document."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield k
            yield from walk_keys(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from walk_keys(v)


def error_code(exc: pytest.ExceptionInfo[GraphsvcError]) -> str:
    return exc.value.code


FILLER = (
    "Appendix on maritime shipping regulations, container tonnage tables and harbour "
    "pilotage fees for the northern ports, listed one by one with their exemptions. "
)

# --------------------------------------------------------------------------- RD-1 / CUR-1


@pytest.mark.req("RD-1", "CUR-1")
def test_later_pages_come_from_the_first_evaluation(service: Service, human: Binding) -> None:
    create(
        service,
        human,
        *(
            {"id": f"v{i}", "text": f"Volcano fact {i}: magma chambers feed eruptions."}
            for i in range(6)
        ),
    )
    page1 = service.read(human, ReadRequest("volcano eruption lava", 4000, limit=2))
    assert page1.cursor is not None
    assert len(root_keys(page1)) == 2
    fresh = create(
        service,
        human,
        {"id": "hot", "text": "Volcano eruption lava: volcano eruption lava flows downhill."},
    )["hot"]
    # The new atom is highly relevant: a fresh evaluation ranks it first.
    assert root_keys(service.read(human, ReadRequest("volcano eruption lava", 4000, limit=1)))[
        0
    ] == key(fresh)
    page2 = service.read(
        human, ReadRequest("volcano eruption lava", 4000, limit=2, cursor=page1.cursor)
    )
    assert key(fresh) not in item_keys(page2)
    assert len(root_keys(page2)) == 2
    assert set(root_keys(page1)).isdisjoint(root_keys(page2))
    assert page2.diagnostics["page"] == {"offset": 2, "total": page1.diagnostics["page"]["total"]}
    # Later pages keep the frozen evaluation's numbers and timestamp.
    assert (
        page2.manifest["acquisition"]["evaluatedAt"]
        == (page1.manifest["acquisition"]["evaluatedAt"])
    )
    seen = set(root_keys(page1)) | set(root_keys(page2))
    cursor = page2.cursor
    while cursor is not None:
        page = service.read(
            human, ReadRequest("volcano eruption lava", 4000, limit=2, cursor=cursor)
        )
        assert seen.isdisjoint(root_keys(page)) and key(fresh) not in item_keys(page)
        seen |= set(root_keys(page))
        cursor = page.cursor
    assert len(seen) == 6


# --------------------------------------------------------------------------- RD-2


@pytest.mark.req("RD-2")
def test_required_closure_is_presented_with_its_root(service: Service, human: Binding) -> None:
    views = create(
        service,
        human,
        {"id": "root", "text": "Saffron risotto needs slow stirring.", "links": [req("dep")]},
        {"id": "dep", "text": "Arborio grains release starch when stirred."},
    )
    result = service.read(human, ReadRequest("saffron risotto", 2000, limit=1))
    assert root_keys(result) == [key(views["root"])]
    assert [(k, i.role) for k, i in zip(item_keys(result), result.items, strict=True)] == [
        (key(views["root"]), "root"),
        (key(views["dep"]), "required"),
    ]
    assert memory_refs(result) == [key(views["root"]), key(views["dep"])]
    texts = [v.get("text") for v in memory(result)]
    assert texts == [
        "Saffron risotto needs slow stirring.",
        "Arborio grains release starch when stirred.",
    ]
    assert result.diagnostics["validation"]["requiredEdges"] == 1
    assert result.diagnostics["validation"]["blockingEdges"] == 0


@pytest.mark.req("RD-2")
def test_cycle_of_required_links_terminates(service: Service, human: Binding) -> None:
    views = create(
        service,
        human,
        {"id": "a", "text": "Tidal locking of moons.", "links": [req("b", "logical")]},
        {"id": "b", "text": "Orbital resonance.", "links": [req("c", "logical")]},
        {"id": "c", "text": "Roche limit.", "links": [req("a", "logical")]},
    )
    result = service.read(human, ReadRequest("tidal locking of moons", 2000, limit=1))
    refs = memory_refs(result)
    assert sorted(refs) == sorted(key(v) for v in views.values())
    assert len(refs) == len(set(refs)) == 3
    assert not any(i.blocked for i in result.items)


@pytest.mark.req("RD-2")
def test_retired_logical_target_blocks_its_root(service: Service, human: Binding) -> None:
    body = "Glacier calving shapes fjords."
    views = create(
        service,
        human,
        {"id": "root", "text": body, "links": [req("dep", "logical")]},
        {"id": "dep", "text": "Ice shelves float on seawater."},
    )
    before = service.read(human, ReadRequest("glacier calving fjords", 2000))
    assert key(views["root"]) in memory_refs(before)
    change(service, human, "retire", views["dep"])
    after = service.read(human, ReadRequest("glacier calving fjords", 2000))
    assert key(views["root"]) in item_keys(after, blocked=True)
    assert key(views["root"]) not in memory_refs(after)
    assert body not in after.text
    blocked = after.diagnostics["selection"]["blockedRoots"]
    assert [b["ref"] for b in blocked] == [key(views["root"])]
    assert blocked[0]["edges"][0]["reason"] == "retired"
    assert after.diagnostics["validation"]["blockingEdges"] == 1


@pytest.mark.req("RD-2")
def test_retired_observed_target_stays_pinned_and_does_not_block(
    service: Service, human: Binding
) -> None:
    views = create(
        service,
        human,
        {"id": "root", "text": "Sourdough starter feeding schedule.", "links": [req("dep")]},
        {"id": "dep", "text": "Wild yeast and lactobacilli ferment flour."},
    )
    change(service, human, "retire", views["dep"])
    result = service.read(human, ReadRequest("sourdough starter feeding", 2000, limit=1))
    assert not any(i.blocked for i in result.items)
    assert memory_refs(result) == [key(views["root"]), key(views["dep"])]
    assert "Wild yeast and lactobacilli ferment flour." in result.text


@pytest.mark.req("RD-2", "RD-4")
def test_root_whose_closure_does_not_fit_is_left_out_whole(
    service: Service, human: Binding
) -> None:
    big = FILLER * 6
    views = create(
        service,
        human,
        {"id": "root", "text": "Quasar redshift survey results.", "links": [req("dep")]},
        {"id": "dep", "text": big},
        {"id": "small", "text": "Quasar brightness varies."},
    )
    budget = 120
    result = service.read(human, ReadRequest("quasar redshift survey", budget))
    root, dep = key(views["root"]), key(views["dep"])
    refs = memory_refs(result)
    assert root not in refs and dep not in refs
    assert key(views["small"]) in refs
    assert "Quasar redshift survey results." not in result.text
    sel = result.diagnostics["selection"]
    assert root in sel["leftOut"]
    need = sel["minBudgetFor"][root]
    assert need > budget
    # The reported minimum budget is exactly what fits the whole closure.
    fitted = service.read(human, ReadRequest("quasar redshift survey", need, limit=1))
    assert memory_refs(fitted) == [root, dep]
    assert count_tokens(fitted.text) <= need
    assert (
        memory_refs(service.read(human, ReadRequest("quasar redshift survey", need - 1, limit=1)))
        == []
    )


@pytest.mark.req("RD-2")
def test_closure_cut_at_size_cap_blocks_instead_of_presenting_part(
    service: Service, human: Binding, test_settings: Settings
) -> None:
    chain = [
        {
            "id": f"c{i}",
            "text": f"Relay tower {i} of the semaphore line.",
            "links": [req(f"c{i + 1}")],
        }
        for i in range(1, 11)
    ]
    views = create(
        service,
        human,
        {"id": "c0", "text": "Chappe telegraph headquarters in Paris.", "links": [req("c1")]},
        *chain,
        {"id": "c11", "text": "The semaphore line ends here."},
    )
    q = "Chappe telegraph headquarters Paris"
    whole = service.read(human, ReadRequest(q, 4000, limit=1))
    assert root_keys(whole) == [key(views["c0"])]
    assert len(memory_refs(whole)) == 12
    assert whole.diagnostics["validation"]["closureTruncated"] is False
    # The walk fetches two levels per query; it still visits every level once.
    assert whole.diagnostics["validation"]["closureLevels"] == 12
    assert whole.diagnostics["validation"]["closureRevisions"] == 12
    # max_nodes=1 caps a closure walk at 8 revisions: the rest of the chain is unknown.
    capped = service_for(
        test_settings.with_(max_nodes=1), service.db, service.embedder, service.tokenizer
    )
    cut = capped.read(human, ReadRequest(q, 4000, limit=1))
    assert cut.diagnostics["validation"]["closureTruncated"] is True
    assert item_keys(cut, blocked=True) == [key(views["c0"])]
    assert memory_refs(cut) == []


@pytest.mark.req("RD-2", "MAN-1")
def test_the_mirror_skips_no_closure_the_store_would_walk(
    service: Service, human: Binding, test_settings: Settings
) -> None:
    # Roots with required links, roots with optional links only and roots with none:
    # the mirror answers the last two without the store; the read is the same as one
    # that asks the store for every root (no mirror).
    views = create(
        service,
        human,
        {"id": "free", "text": "Lantern festival boats drift downstream."},
        {
            "id": "loose",
            "text": "Lantern festival paper is waxed.",
            "links": [{"role": "see", "target": {"local": "free"}}],
        },
        {"id": "root", "text": "Lantern festival candles", "links": [req("dep")]},
        {"id": "dep", "text": "Beeswax candles burn slowly.", "links": [req("tail", "logical")]},
        {"id": "tail", "text": "Wicks are braided cotton."},
        {"id": "gone", "text": "Lantern festival fireworks", "links": [req("old", "logical")]},
        {"id": "old", "text": "Black powder recipes."},
    )
    change(service, human, "retire", views["old"])
    no_mirror = service_for(
        test_settings.with_(head_mirror_max=0), service.db, service.embedder, service.tokenizer
    )
    q = "lantern festival"
    mirrored = service.read(human, ReadRequest(q, 4000, paged=False))
    stored = no_mirror.read(human, ReadRequest(q, 4000, paged=False))
    assert mirrored.text == stored.text
    # The same items and roles; the scores agree as the two candidate paths do (the
    # mirror's lexical leg is the subject's BM25 in numpy, the store's Lucene's).
    assert [i.to_dict() | {"score": pytest.approx(i.score)} for i in mirrored.items] == [
        i.to_dict() for i in stored.items
    ]
    assert mirrored.selection.tokens == stored.selection.tokens
    assert mirrored.diagnostics["validation"] == stored.diagnostics["validation"]
    assert mirrored.manifest["presentation"] == stored.manifest["presentation"]
    # The versions loaded (in the order each path loads them).
    versions = [sorted(r.manifest["acquisition"]["versions"]) for r in (mirrored, stored)]
    assert versions[0] == versions[1]
    assert key(views["root"]) in root_keys(mirrored)
    assert {key(views["dep"]), key(views["tail"])} <= set(memory_refs(mirrored))
    assert key(views["gone"]) in item_keys(mirrored, blocked=True)
    assert mirrored.diagnostics["validation"]["requiredEdges"] == 3


@pytest.mark.req("RD-2", "LNK-1")
def test_required_target_whose_watch_moved_is_stale_and_blocks(
    service: Service, human: Binding, agent: Binding
) -> None:
    watched = create(service, human, {"id": "w", "text": "Exchange rate EUR/USD is 1.08."})["w"]
    token = observe(service, agent, watches=[{"atomId": watched.atom_id, "rev": watched.rev}])
    derived = create(
        service,
        agent,
        {"id": "d", "text": "Import prices follow the exchange rate.", "input": token},
    )["d"]
    root = create(
        service,
        human,
        {
            "id": "r",
            "text": "Coffee bean import costs for roasters.",
            "links": [req_ref(derived, "logical")],
        },
    )["r"]
    before = service.read(human, ReadRequest("coffee bean import costs", 2000, limit=1))
    assert memory_refs(before) == [key(root), key(derived)]
    change(service, human, "revise", watched, "Exchange rate EUR/USD is 1.15.")
    after = service.read(human, ReadRequest("coffee bean import costs", 2000, limit=1))
    assert item_keys(after, blocked=True) == [key(root)]
    assert "Coffee bean import costs for roasters." not in after.text
    edges = after.diagnostics["selection"]["blockedRoots"][0]["edges"]
    assert [e["reason"] for e in edges] == ["stale"]


@pytest.mark.req("RD-2", "LNK-1", "TOK-5")
def test_inherited_watch_that_moved_also_blocks(
    service: Service, human: Binding, agent: Binding
) -> None:
    watched = create(service, human, {"id": "w", "text": "Tariff on steel is 25%."})["w"]
    parent = observe(service, agent, watches=[{"atomId": watched.atom_id, "rev": watched.rev}])
    child = observe(service, agent, inherit=[parent])
    derived = create(
        service, agent, {"id": "d", "text": "Steel prices include the tariff.", "input": child}
    )["d"]
    root = create(
        service,
        human,
        {"id": "r", "text": "Shipyard hull costs per tonne.", "links": [req_ref(derived)]},
    )["r"]
    assert memory_refs(service.read(human, ReadRequest("shipyard hull costs", 2000, limit=1))) == [
        key(root),
        key(derived),
    ]
    change(service, human, "revise", watched, "Tariff on steel is 10%.")
    after = service.read(human, ReadRequest("shipyard hull costs", 2000, limit=1))
    assert item_keys(after, blocked=True) == [key(root)]
    edges = after.diagnostics["selection"]["blockedRoots"][0]["edges"]
    assert [e["reason"] for e in edges] == ["stale"]


# --------------------------------------------------------------------------- RD-4 / RD-8


def _shared_corpus(service: Service, binding: Binding) -> dict[str, Any]:
    return create(
        service,
        binding,
        {"id": "shared", "text": "Photosynthesis converts light into chemical energy."},
        {"id": "r1", "text": "Chlorophyll absorbs red and blue light.", "links": [req("shared")]},
        {"id": "r2", "text": "Leaves are green because of chlorophyll.", "links": [req("shared")]},
        {"id": "r3", "text": "Stomata let carbon dioxide into the leaf.", "links": [req("shared")]},
        *({"id": f"f{i}", "text": f"Plant fact {i}: " + FILLER} for i in range(4)),
    )


@pytest.mark.req("RD-4", "RD-8")
def test_budget_is_never_exceeded_and_tokens_are_exact(service: Service, human: Binding) -> None:
    _shared_corpus(service, human)
    sizes = []
    for budget in (0, 5, 20, 50, 100, 180, 400, 2000):
        result = service.read(human, ReadRequest("chlorophyll light leaves", budget))
        tokens = count_tokens(result.text)
        assert tokens <= budget, (budget, tokens)
        assert result.selection.tokens == tokens
        assert result.selection.budget == budget
        assert result.diagnostics["selection"]["tokens"] == tokens
        sizes.append(len(memory_refs(result)))
    assert sizes[0] == 0 and sizes[-1] == 8  # nothing fits 0 tokens; everything fits 2000


@pytest.mark.req("RD-4", "RD-5")
def test_shared_required_body_is_rendered_once(service: Service, human: Binding) -> None:
    views = _shared_corpus(service, human)
    result = service.read(human, ReadRequest("chlorophyll light leaves", 2000))
    refs = memory_refs(result)
    assert refs.count(key(views["shared"])) == 1
    assert {key(views[r]) for r in ("r1", "r2", "r3", "shared")} <= set(refs)
    assert result.text.count("Photosynthesis converts light into chemical energy.") == 1


# --------------------------------------------------------------------------- RD-5


@pytest.mark.req("RD-5")
def test_text_holds_bodies_once_and_items_hold_refs(service: Service, human: Binding) -> None:
    views = _shared_corpus(service, human)
    result = service.read(human, ReadRequest("chlorophyll light leaves", 2000))
    assert result.format_version == 2
    doc = json.loads(result.text)
    assert doc["formatVersion"] == 2
    assert set(doc) == {"evidence", "formatVersion", "memory"}
    assert "score" not in set(walk_keys(doc))
    for v in views.values():
        assert result.text.count(json.dumps(v.text, ensure_ascii=False)) == 1
    items = result.to_json()["items"]
    for item in items:
        assert set(item) == {"ref", "role", "score", "blocked"}
        assert set(item["ref"]) == {"atomId", "rev"}
    items_json = json.dumps(items)
    assert all(v.text not in items_json for v in views.values())
    assert json.dumps(result.diagnostics).count("Photosynthesis") == 0


# --------------------------------------------------------------------------- RD-6 / RD-7


@pytest.mark.req("RD-6", "RD-7", "RD-8")
def test_work_limit_cut_reports_incomplete_baseline(
    service: Service, human: Binding, test_settings: Settings
) -> None:
    _shared_corpus(service, human)
    normal = service.read(human, ReadRequest("chlorophyll light leaves", 2000))
    assert normal.selection.baseline_complete is True
    assert normal.selection.coverage_certified is False
    tight = service_for(
        test_settings.with_(packing_work=50), service.db, service.embedder, service.tokenizer
    )
    cut = tight.read(human, ReadRequest("chlorophyll light leaves", 2000))
    assert cut.selection.baseline_complete is False
    assert cut.selection.coverage_certified is False
    assert cut.diagnostics["selection"]["workUsed"] <= 50
    assert count_tokens(cut.text) == cut.selection.tokens <= 2000
    assert len(memory_refs(cut)) < len(memory_refs(normal))


# --------------------------------------------------------------------------- RD-3


@pytest.mark.req("RD-3")
def test_depth_and_limit_are_honoured(
    service: Service, human: Binding, test_settings: Settings
) -> None:
    views = create(
        service,
        human,
        {
            "id": "seed",
            "text": "Honeybee waggle dance communicates distance.",
            "links": [{"role": "see", "target": {"local": "n1"}}],
        },
        {
            "id": "n1",
            "text": "Hexagonal wax combs store nectar.",
            "links": [{"role": "see", "target": {"local": "n2"}}],
        },
        {"id": "n2", "text": "Queen pheromones regulate the hive."},
        *({"id": f"o{i}", "text": f"Honeybee note {i}: foragers visit clover."} for i in range(5)),
    )
    # Only one seed, so the neighbours can arrive only through propagation.
    one_seed = service_for(
        test_settings.with_(max_seeds=1), service.db, service.embedder, service.tokenizer
    )
    q = "honeybee waggle dance distance"
    flat = one_seed.read(human, ReadRequest(q, 4000, depth=0))
    assert item_keys(flat) == [key(views["seed"])]
    assert flat.diagnostics["evaluation"]["levels"] == 0
    one = one_seed.read(human, ReadRequest(q, 4000, depth=1))
    assert set(item_keys(one)) == {key(views["seed"]), key(views["n1"])}
    two = one_seed.read(human, ReadRequest(q, 4000, depth=2))
    assert set(item_keys(two)) == {key(views[k]) for k in ("seed", "n1", "n2")}
    for limit in (1, 3):
        capped = service.read(human, ReadRequest(q, 4000, limit=limit))
        assert len(root_keys(capped)) == limit
        assert capped.cursor is not None
    assert len(root_keys(service.read(human, ReadRequest(q, 4000, limit=24)))) == len(views)


# --------------------------------------------------------------------------- MAN-1 / MAN-3


@pytest.mark.req("MAN-1")
def test_manifest_parts_and_presentation_digest(service: Service, agent: Binding) -> None:
    human = Binding(agent.subject, agent.policy, "human", "alice")
    _shared_corpus(service, human)
    result = service.read(agent, ReadRequest("chlorophyll light leaves", 400))
    m = result.manifest
    assert m["contractVersion"] == 2 and isinstance(m["id"], str) and m["id"]
    assert {"acquisition", "presentation", "watches", "generation", "acknowledgement"} <= set(m)
    assert m["presentation"]["digest"] == (
        "sha256:" + hashlib.sha256(result.text.encode("utf-8")).hexdigest()
    )
    presented = [f"{r['atomId']}@{r['rev']}" for r in m["presentation"]["revisions"]]
    assert presented == memory_refs(result)
    assert m["acquisition"]["query"] == "chlorophyll light leaves"
    assert set(presented) <= set(m["acquisition"]["versions"])
    assert [f"{h['atomId']}@{h['rev']}" for h in m["watches"]["heads"]] == presented
    stored = cypher(
        service,
        "MATCH (m:Manifest {subject: $s, manifestId: $id})-[:PRESENTS]->(r) "
        "RETURN m.digest AS digest, collect(r.atomId + '@' + toString(r.rev)) AS refs",
        s=agent.subject,
        id=m["id"],
    )[0]
    assert stored["digest"] == m["presentation"]["digest"]
    assert sorted(stored["refs"]) == sorted(presented)


@pytest.mark.req("MAN-1", "TOK-5")
def test_observed_presentation_links_generated_revision_to_presented_revisions(
    service: Service, agent: Binding
) -> None:
    human = Binding(agent.subject, agent.policy, "human", "alice")
    _shared_corpus(service, human)
    result = service.read(agent, ReadRequest("chlorophyll light leaves", 400))
    presented = sorted(memory_refs(result))
    assert presented
    token = observe(service, agent, presentations=[result.manifest["id"]])
    out = create(service, agent, {"id": "ans", "text": "Answer about leaves.", "input": token})
    rows = cypher(
        service,
        "MATCH (:Revision {subject: $s, atomId: $a, rev: 1})-[:GENERATED_FROM]->(i:Input)"
        "-[:PRESENTED]->(r:Revision) RETURN r.atomId + '@' + toString(r.rev) AS ref",
        s=agent.subject,
        a=out["ans"].atom_id,
    )
    assert sorted(r["ref"] for r in rows) == presented


@pytest.mark.req("MAN-1", "AV-3", "AV-4")
def test_record_use_acknowledges_manifest_and_dedups_event(
    service: Service, agent: Binding
) -> None:
    human = Binding(agent.subject, agent.policy, "human", "alice")
    _shared_corpus(service, human)
    result = service.read(agent, ReadRequest("chlorophyll light leaves", 400))
    first = service.record_use(agent, "event-1", result.manifest)
    assert first.repeated is False and first.updated == len(memory_refs(result))
    ack = cypher(
        service,
        "MATCH (m:Manifest {subject: $s, manifestId: $id}) RETURN m.acknowledgedEventId AS e",
        s=agent.subject,
        id=result.manifest["id"],
    )
    assert ack == [{"e": "event-1"}]
    again = service.record_use(agent, "event-1", result.manifest)
    assert again.to_json() == {"eventId": "event-1", "repeated": True, "updated": 0}
    # read never touches usage (AV-4); only recordUse did, once per presented revision.
    states = cypher(
        service,
        "MATCH (u:UsageState {subject: $s}) RETURN count(u) AS n",
        s=agent.subject,
    )
    assert states == [{"n": len(memory_refs(result))}]


@pytest.mark.req("MAN-3")
def test_source_citation_does_not_make_the_cited_atom_presented(
    service: Service, agent: Binding
) -> None:
    human = Binding(agent.subject, agent.policy, "human", "alice")
    cited_text = "The Treaty of Westphalia was signed in 1648 in Osnabrück and Münster."
    cited = create(service, human, {"id": "src", "text": cited_text})["src"]
    citing = create(
        service,
        human,
        {
            "id": "c",
            "text": "Westphalian sovereignty dates from a 1648 peace treaty.",
            "sources": [
                {
                    "uri": f"atom:{cited.atom_id}",
                    "version": str(cited.rev),
                    "range": {"start": 0, "end": 37, "unit": "char"},
                }
            ],
        },
    )["c"]
    result = service.read(agent, ReadRequest("Westphalian sovereignty peace treaty", 2000, limit=1))
    assert root_keys(result) == [key(citing)]
    assert memory_refs(result) == [key(citing)]
    presented = [f"{r['atomId']}@{r['rev']}" for r in result.manifest["presentation"]["revisions"]]
    assert presented == [key(citing)]
    assert cited_text not in result.text  # only the cited range, as evidence
    doc = json.loads(result.text)
    assert [e["text"] for e in doc["evidence"]] == [cited_text[:37]]
    assert result.manifest["presentation"]["ranges"][0]["uri"] == f"atom:{cited.atom_id}"
    token = observe(service, agent, presentations=[result.manifest["id"]])
    out = create(service, agent, {"id": "ans", "text": "Sovereignty answer.", "input": token})
    rows = cypher(
        service,
        "MATCH (:Revision {subject: $s, atomId: $a})-[:GENERATED_FROM]->(:Input)"
        "-[:PRESENTED]->(r) RETURN r.atomId AS atomId",
        s=agent.subject,
        a=out["ans"].atom_id,
    )
    assert [r["atomId"] for r in rows] == [citing.atom_id]


# --------------------------------------------------------------------------- CUR-2 / CUR-3


@pytest.mark.req("CUR-2")
def test_cursor_bound_to_query_budget_and_binding(service: Service, human: Binding) -> None:
    create(service, human, *({"id": f"k{i}", "text": f"Kiln firing note {i}."} for i in range(5)))
    page1 = service.read(human, ReadRequest("kiln firing", 1000, limit=2))
    assert page1.cursor is not None
    other = Binding(human.subject, human.policy, "agent", "bot-9")
    # (binding, query, budget, options): each differs from page 1 in one thing.
    attempts: list[tuple[Binding, str, int, dict[str, Any]]] = [
        (human, "kiln firing", 999, {"limit": 2}),
        (human, "kiln glaze", 1000, {"limit": 2}),
        (other, "kiln firing", 1000, {"limit": 2}),
        (human, "kiln firing", 1000, {"limit": 2, "depth": 1}),
        (human, "kiln firing", 1000, {"limit": 3}),
        (human, "kiln firing", 1000, {"limit": 2, "include_archived": True}),
    ]
    for binding, q, budget, opts in attempts:
        with pytest.raises(GraphsvcError) as info:
            service.read(binding, ReadRequest(q, budget, cursor=page1.cursor, **opts))
        assert error_code(info) == "CURSOR_EXPIRED", (q, budget, opts)
    with pytest.raises(GraphsvcError) as info:
        service.read(
            human, ReadRequest("kiln firing", 1000, limit=2, cursor=page1.cursor[:-4] + "AAAA")
        )
    assert error_code(info) == "CURSOR_EXPIRED"
    later = service_for(
        service.settings,
        service.db,
        service.embedder,
        service.tokenizer,
        clock=lambda: time.time() + service.settings.lifetimes.cursor_lifetime_s + 1,
    )
    with pytest.raises(GraphsvcError) as info:
        later.read(human, ReadRequest("kiln firing", 1000, limit=2, cursor=page1.cursor))
    assert error_code(info) == "CURSOR_EXPIRED"
    # The unchanged request still pages.
    assert service.read(human, ReadRequest("kiln firing", 1000, limit=2, cursor=page1.cursor)).items


@pytest.mark.req("CUR-3")
def test_diagnostics_have_separate_parts(service: Service, human: Binding) -> None:
    _shared_corpus(service, human)
    d = service.read(human, ReadRequest("chlorophyll light leaves", 400)).diagnostics
    assert {"acquisition", "validation", "evaluation", "selection"} <= set(d)
    assert d["acquisition"]["candidates"] > 0
    assert d["validation"]["requiredEdges"] == 3
    assert d["evaluation"]["converged"] is True and "solver" in d["evaluation"]
    assert d["selection"]["coverageCertified"] is False


# --------------------------------------------------------------------------- ATM-6, LNK-6


@pytest.mark.req("ATM-6")
def test_archived_parent_hidden_unless_include_archived(service: Service, human: Binding) -> None:
    views = create(
        service,
        human,
        {"id": "p", "text": "Lighthouse keepers logged storms nightly."},
        {"id": "q", "text": "Lighthouse lenses are Fresnel lenses."},
    )
    cypher(
        service,
        "MATCH (r:Revision:Current {subject: $s, atomId: $a}) "
        "SET r.atomisedInto = 2, r.archivedAt = '2024-01-01T00:00:00+00:00'",
        s=human.subject,
        a=views["p"].atom_id,
    )
    hidden = service.read(human, ReadRequest("lighthouse keepers storms", 2000))
    assert key(views["p"]) not in item_keys(hidden)
    assert key(views["q"]) in item_keys(hidden)
    shown = service.read(
        human, ReadRequest("lighthouse keepers storms", 2000, include_archived=True)
    )
    assert key(views["p"]) in memory_refs(shown)


@pytest.mark.req("LNK-6")
def test_read_answers_purge_pending_while_a_marker_stands(service: Service, human: Binding) -> None:
    create(service, human, {"id": "a", "text": "Comet tails point away from the sun."})
    cypher(
        service,
        "CREATE (:PurgeMarker {subject: $s, atomId: 'gone', startedAt: 0, step: 'start'})",
        s=human.subject,
    )
    try:
        with pytest.raises(GraphsvcError) as info:
            service.read(human, ReadRequest("comet tails", 1000))
        assert error_code(info) == "PURGE_PENDING"
    finally:
        cypher(service, "MATCH (p:PurgeMarker {subject: $s}) DETACH DELETE p", s=human.subject)


@pytest.mark.req("LNK-6", "CUR-1")
def test_later_page_answers_purge_pending_too(service: Service, human: Binding) -> None:
    create(service, human, *({"id": f"m{i}", "text": f"Meteor shower {i}."} for i in range(4)))
    page1 = service.read(human, ReadRequest("meteor shower", 1000, limit=2))
    assert page1.cursor is not None
    cypher(service, "CREATE (:PurgeMarker {subject: $s, atomId: 'gone'})", s=human.subject)
    try:
        with pytest.raises(GraphsvcError) as info:
            service.read(human, ReadRequest("meteor shower", 1000, limit=2, cursor=page1.cursor))
        assert error_code(info) == "PURGE_PENDING"
    finally:
        cypher(service, "MATCH (p:PurgeMarker {subject: $s}) DETACH DELETE p", s=human.subject)


# --------------------------------------------------------------------------- input limits


@pytest.mark.req("RD-8", "API-3")
def test_bad_read_arguments_are_invalid_input(service: Service, human: Binding) -> None:
    cases: list[tuple[str, int, dict[str, Any]]] = [
        ("", 100, {}),
        ("x", -1, {}),
        ("x", service.settings.read.max_read_budget + 1, {}),
        ("x", 100, {"limit": 0}),
        ("x", 100, {"depth": -1}),
        ("x", 100, {"depth": service.settings.ranking.max_depth + 1}),
    ]
    for q, budget, opts in cases:
        with pytest.raises(GraphsvcError) as info:
            service.read(human, ReadRequest(q, budget, **opts))
        assert error_code(info) == "INVALID_INPUT", (q, budget, opts)


# --------------------------------------------------------------------------- GraphQL


READ = """
query($q: String!, $b: Int!, $limit: Int, $depth: Int, $cursor: String) {
  read(query: $q, memoryTokenBudget: $b, limit: $limit, depth: $depth, cursor: $cursor) {
    text formatVersion cursor manifest diagnostics
    items { ref { atomId rev } role score blocked }
    selection { baselineComplete coverageCertified tokens budget }
  }
}
"""


@pytest.mark.req("RD-5", "RD-8", "MAN-1", "CUR-1", "API-6")
def test_read_over_graphql_http(live_server: Any, service: Service, human: Binding) -> None:
    views = _shared_corpus(service, human)
    token = live_server.token_for(human)
    body = live_server.gql(
        READ, {"q": "chlorophyll light leaves", "b": 300, "limit": 2}, token=token
    )
    assert "errors" not in body, body
    out = body["data"]["read"]
    assert out["formatVersion"] == 2
    assert count_tokens(out["text"]) == out["selection"]["tokens"] <= 300
    assert out["selection"]["coverageCertified"] is False
    assert out["selection"]["baselineComplete"] is True
    assert out["manifest"]["contractVersion"] == 2
    assert out["manifest"]["presentation"]["digest"] == (
        "sha256:" + hashlib.sha256(out["text"].encode("utf-8")).hexdigest()
    )
    assert {"acquisition", "validation", "evaluation", "selection"} <= set(out["diagnostics"])
    known = {v.atom_id for v in views.values()}
    assert out["items"] and all(i["ref"]["atomId"] in known for i in out["items"])
    assert sum(1 for i in out["items"] if i["role"] == "root") <= 2
    assert out["cursor"]
    nxt = live_server.gql(
        READ,
        {"q": "chlorophyll light leaves", "b": 300, "limit": 2, "cursor": out["cursor"]},
        token=token,
    )
    assert "errors" not in nxt, nxt
    page2 = nxt["data"]["read"]
    roots1 = {i["ref"]["atomId"] for i in out["items"] if i["role"] == "root"}
    roots2 = {i["ref"]["atomId"] for i in page2["items"] if i["role"] == "root"}
    assert roots1.isdisjoint(roots2)
    expired = live_server.gql(
        READ,
        {"q": "chlorophyll light leaves", "b": 301, "limit": 2, "cursor": out["cursor"]},
        token=token,
    )
    assert expired["errors"][0]["extensions"]["code"] == "CURSOR_EXPIRED"


@pytest.mark.req("API-1", "API-3")
def test_bad_budget_over_graphql_is_invalid_input(live_server: Any, human: Binding) -> None:
    token = live_server.token_for(human)
    for variables in ({"q": "x", "b": -5}, {"q": "x", "b": 10, "limit": 0}, {"q": "", "b": 10}):
        body = live_server.gql(READ, variables, token=token)
        assert body["data"] is None, body
        assert body["errors"][0]["extensions"]["code"] == "INVALID_INPUT", body
    body = live_server.gql(READ, {"q": "x", "b": 10})
    assert body["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


@pytest.mark.req("MAN-1")
def test_expired_manifests_are_removed_by_later_reads(
    service: Service, human: Binding, test_settings: Settings
) -> None:
    service.write(
        human,
        parse_changes(
            [
                {
                    "id": "a",
                    "op": "create",
                    "content": {"text": "Manifest retention probe.", "links": []},
                    "sources": [],
                }
            ]
        ),
    )
    first = service.read(human, ReadRequest("manifest retention probe", 300)).manifest["id"]
    short = service_for(
        test_settings.with_(manifest_lifetime_s=0),
        service.db,
        service.embedder,
        service.tokenizer,
        clock=lambda: time.time() + 5,
    )
    second = short.read(human, ReadRequest("manifest retention probe", 300)).manifest["id"]
    records, _, _ = service.db.driver.execute_query(
        "MATCH (m:Manifest {subject: $s}) RETURN collect(m.manifestId) AS ids",
        {"s": human.subject},
        database_=service.db.database,
        routing_=RoutingControl.READ,
    )
    assert records[0]["ids"] == [second]
    assert first != second
