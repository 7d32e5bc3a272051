"""Browser tests (issue 17): GraphiQL and ``/explore`` in headless Chromium, offline.

Python ``playwright`` drives Debian's ``/usr/bin/chromium`` (``executable_path``; no
browser download). The live server is the real graphsvc on a loopback port with the
real Neo4j. Screenshots go to ``test-results/`` (CI keeps them as artefacts).

A request to any host other than the live server is aborted and counted as a failure,
so these tests prove the pages need no network.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from write_support import new, ref, revise, write

from graphsvc.core.binding import Binding
from graphsvc.core.requests import InspectRequest, ReadRequest, SearchRequest
from graphsvc.seed import load_team_corpus
from graphsvc.service import Service

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SHOTS = Path(os.environ.get("GRAPHSVC_TEST_RESULTS", "test-results"))
# Optional: a folder that also gets a copy of every screenshot (for a person to look
# at; the tests keep theirs under test-results/ or their tmp dir).
SHOTS_COPY = os.environ.get("GRAPHSVC_SHOTS_COPY")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not shutil.which(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing (.ci/run installs Debian's chromium)")
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Watched:
    """A page whose console errors, failed requests and off-host requests are recorded."""

    def __init__(self, browser: Any, base_url: str) -> None:
        self.page = browser.new_page(viewport={"width": 1440, "height": 900})
        self.errors: list[str] = []
        self.failed: list[str] = []
        host = urlparse(base_url).netloc
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("requestfailed", lambda r: self.failed.append(f"{r.url}: {r.failure}"))

        def route(r: Any) -> None:
            if urlparse(r.request.url).netloc == host or r.request.url.startswith("data:"):
                r.continue_()
            else:
                self.failed.append(f"off-host request {r.request.url}")
                r.abort()

        self.page.route("**/*", route)

        def on_response(resp: Any) -> None:
            if resp.status >= 400:
                self.failed.append(f"{resp.url}: HTTP {resp.status}")

        self.page.on("response", on_response)

    def shot(self, name: str) -> Path:
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{name}.png"
        self.page.screenshot(path=str(path))
        if SHOTS_COPY:
            Path(SHOTS_COPY).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(SHOTS_COPY) / path.name)
        return path

    def close(self) -> None:
        self.page.close()


@pytest.mark.req("API-5")
def test_graphiql_loads_offline_and_runs_health(browser: Any, live_server: Any) -> None:
    w = Watched(browser, live_server.url)
    page = w.page
    response = page.goto(f"{live_server.url}/graphql")
    # Served under a Content-Security-Policy (issue 26): a violation would be a
    # console error, which the assertions below refuse.
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page.wait_for_selector(".graphiql-execute-button", timeout=30_000)
    # The headers editor is open with the hint prefilled (a placeholder, not a token).
    page.wait_for_function(
        "() => document.body.innerText.includes('\"Bearer YOUR_TOKEN\"')", timeout=10_000
    )
    page.click(".graphiql-execute-button")
    result = page.locator(".result-window")
    result.get_by_text('"schemaVersion"').wait_for(timeout=30_000)
    text = result.inner_text()
    w.shot("graphiql-health")
    assert '"health"' in text and '"neo4j"' in text.lower(), text
    assert w.failed == [], w.failed
    assert w.errors == [], w.errors
    w.close()


# ------------------------------------------------------------------ explorer


@pytest.fixture(scope="module")
def team(service: Service) -> dict[str, Any]:
    """The team demo corpus (seed/team.json) in a subject of its own."""
    subject = f"t-team-{uuid.uuid4().hex[:8]}"
    ticks: list[tuple[int, int, str]] = []
    report = load_team_corpus(service, subject=subject, progress=lambda *t: ticks.append(t))
    return {"binding": Binding(subject, "default", "human", "browser"), "ticks": ticks, **report}


@pytest.mark.req("API-4")
def test_team_corpus_loads_through_the_write_path_with_progress(
    service: Service, team: dict[str, Any]
) -> None:
    """seed/team.json: 305 atoms with revisions, retirements, a required cycle, a
    verified stored citation, signed lineage; a second subject; loading again repeats."""
    ticks = team["ticks"]
    assert [d for d, _, _ in ticks] == sorted(d for d, _, _ in ticks)
    assert ticks[-1][0] == ticks[-1][1] and ticks[-1][2] == "second subject"
    assert len(ticks) >= 8
    assert (team["atoms"], team["revisions"], team["retired"]) == (305, 17, 5)
    assert team["atomisedInto"] == 6 and team["repeated"] is False
    binding, ids = team["binding"], team["ids"]

    def view(local: str) -> Any:
        return service.inspect(binding, InspectRequest(ids[local])).atom

    assert view("adr:2").state == "retired" and view("adr:12").rev == 2
    # api-gateway → auth-gateway → feature-flags → api-gateway: a cycle of required links.
    chain = ["svc:api-gateway", "svc:auth-gateway", "svc:feature-flags", "svc:api-gateway"]
    for a, b in itertools.pairwise(chain):
        assert any(
            link.required and link.target and link.target.atom_id == ids[b]
            for link in view(a).links
        ), (a, b)
    cause = view("inc:2230:cause")
    stored = [s for s in cause.sources if s["uri"] == f"atom:{ids['inc:2230:trigger']}"]
    assert stored and stored[0]["verified"] is True
    assert stored[0]["range"] == {"start": 0, "end": 40, "unit": "char"}
    assert view("retro:2026q3").state == "archived"
    # The partner's atoms live in their own subject only.
    partner = Binding(team["secondSubject"]["subject"], "default", "human", "browser")
    theirs = service.search(partner, SearchRequest("Orion settlement files", limit=20)).hits
    ours = service.search(binding, SearchRequest("Orion settlement files", limit=20)).hits
    assert len(theirs) >= 5 and all("Orion" not in h.atom.text for h in ours)
    # Loading again is a repeated write everywhere (and the note is already atomised).
    again = load_team_corpus(service, subject=binding.subject)
    assert again["repeated"] is True and again["ids"] == ids


# A drawing is finished when the node list shows every drawn node (it is refreshed
# last, after the entities of the drawn atoms arrived) and there are more than n.
_DRAWN = """(n) => { const cy = window.graphsvcExplorer.cy;
  return cy.nodes().length > n
    && document.getElementById('node-count').textContent === String(cy.nodes().length); }"""


def _graph(page: Any) -> dict[str, Any]:
    """The drawing: atom (and ghost) nodes and their edges; the entity index's diamonds
    and MENTIONS lines apart, under ``entities`` and ``mentions``."""
    result: dict[str, Any] = page.evaluate(
        """() => { const cy = window.graphsvcExplorer.cy; return {
             nodes: cy.nodes().not('.entity').map(n => ({id: n.id(), label: n.data('label'),
                                          state: n.data('state'), cls: n.classes()})),
             edges: cy.edges("[kind != 'mentions']").map(e => ({source: e.source().id(),
                                          target: e.target().id(),
                                          role: e.data('role'), at: e.data('at'),
                                          kind: e.data('kind'), required: e.data('required')})),
             entities: cy.nodes('.entity').map(n => ({id: n.id(), label: n.data('label'),
                                          type: n.data('etype'), colour: n.data('colour'),
                                          shape: n.style('shape')})),
             mentions: cy.edges("[kind = 'mentions']").map(e => ({source: e.source().id(),
                                          target: e.target().id()})),
             colours: Object.fromEntries(cy.nodes().not('.entity').map(
                                          n => [n.id(), n.data('colour')])),
           }; }"""
    )
    return result


@pytest.mark.req("API-5")
def test_explorer_search_open_expand_side_panel_and_read(
    browser: Any, live_server: Any, service: Service, team: dict[str, Any]
) -> None:
    ids = team["ids"]
    token = live_server.token_for(team["binding"])
    w = Watched(browser, live_server.url)
    page = w.page
    page.goto(f"{live_server.url}/explore")

    # Sign in: a wrong token is refused in place; the right one is kept in sessionStorage.
    assert page.locator("#whoami").is_hidden() and page.locator("#q").is_disabled()
    page.fill("#token", "not-a-token")
    page.keyboard.press("Enter")
    page.wait_for_selector("#search-status.error", timeout=10_000)
    assert "UNAUTHENTICATED" in page.inner_text("#search-status")
    page.fill("#token", token)
    page.keyboard.press("Enter")
    page.wait_for_selector("#whoami:not([hidden])", timeout=10_000)
    assert page.locator("#signin").is_hidden() and page.locator("#q").is_enabled()
    # The refused sign-in answered HTTP 401 (GraphQL-over-HTTP, with the coded error
    # body the page showed); Chromium logs that one response, and nothing else may fail.
    assert w.errors == [
        "Failed to load resource: the server responded with a status of 401 (Unauthorized)"
    ], w.errors
    assert w.failed == [f"{live_server.url}/graphql: HTTP 401"], w.failed
    w.errors.clear()
    w.failed.clear()
    assert page.evaluate("() => sessionStorage.getItem('graphsvc.explore.token')") == token
    assert token not in page.url

    # Search with the keyboard; hits show score, state and a short text.
    page.fill("#q", "how long are payment idempotency keys kept")
    page.keyboard.press("Enter")
    page.wait_for_selector("#hits .hit", timeout=30_000)
    hits = page.locator("#hits .hit")
    assert hits.count() >= 5
    assert float(hits.first.inner_text().split()[0]) > 0
    adr12 = ids["adr:12"]
    hit = page.locator(f'#hits .hit[data-atom-id="{adr12}"]')
    assert "ADR-012" in hit.inner_text() and "r2" in hit.inner_text()
    w.shot("explore-search")

    # Purge the follow-up that ADR-012 closes: that link's target becomes unavailable.
    operator = Binding(team["binding"].subject, "default", "human", "op", may_purge=True)
    service.purge(operator, ids["inc:2490:action1"])

    # Open ADR-012 (rev 2) from the keyboard: its four outgoing links are drawn, the
    # required one heavier, the purged target as a ghost that names nothing.
    hit.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(_DRAWN, arg=1, timeout=30_000)
    g = _graph(page)
    by_id = {n["id"]: n for n in g["nodes"]}
    ghost = f"ghost:{adr12}:2"
    assert set(by_id) == {adr12, ids["svc:payments-api"], ids["inc:2490"], ghost, ids["adr:2"]}
    assert "ghost" in by_id[ghost]["cls"] and by_id[ghost]["label"] == "unavailable (closes)"
    assert ids["inc:2490:action1"] not in json.dumps(g)
    assert by_id[adr12]["label"].startswith("ADR-012 (payments-api, idempotency keys v2)")
    assert "root" in by_id[adr12]["cls"]
    assert {(e["source"], e["target"], e["role"], e["required"]) for e in g["edges"]} == {
        (adr12, ids["svc:payments-api"], "decides-for", True),
        (adr12, ids["inc:2490"], "motivated-by", False),
        (adr12, ghost, "closes", False),
        (adr12, ids["adr:2"], "supersedes", False),
    }
    assert int(page.inner_text("#node-count")) == 5 + len(g["entities"])
    assert int(page.inner_text("#edge-count")) == 4 + len(g["mentions"])
    # The entities two drawn atoms share are drawn too (shared mode): the service.
    assert "entity:payments-api" in {e["id"] for e in g["entities"]}
    legend = page.inner_text("#legend")
    for word in ("active", "retired", "unavailable", "required", "logical", "supersedes"):
        assert word in legend

    # Side panel: full text, the citation range, two revisions to pick from.
    assert "It supersedes ADR-002." in page.inner_text("#side-text")
    assert "closes · observed → unavailable" in page.inner_text("#side-out")
    assert "line 1–48" in page.inner_text("#side-cites")
    assert page.locator("#rev-pick option").all_inner_texts() == ["rev 2 (head)", "rev 1"]
    page.select_option("#rev-pick", "1")
    page.wait_for_function(
        "() => !document.getElementById('side-text').textContent.includes('supersedes')"
        " && document.getElementById('side-meta').textContent.includes('rev 1 (superseded)')",
        timeout=15_000,
    )
    w.shot("explore-open")

    # Expand payments-api with a real double click on the canvas: its incoming links arrive,
    # among them the retired ADR-002's head, now drawn as retired.
    svc = ids["svc:payments-api"]
    pos = page.evaluate(
        """(id) => { const p = window.graphsvcExplorer.cy.getElementById(id).renderedPosition();
                     const r = document.getElementById('cy').getBoundingClientRect();
                     return {x: r.left + p.x, y: r.top + p.y}; }""",
        svc,
    )
    page.mouse.dblclick(pos["x"], pos["y"])  # a double click expands (a click selects)
    page.wait_for_function(_DRAWN, arg=5, timeout=30_000)
    page.wait_for_function(
        "(t) => document.getElementById('side-text').textContent === t",
        arg=service.inspect(team["binding"], InspectRequest(svc)).atom.text,
        timeout=15_000,
    )
    g2 = _graph(page)
    nodes2 = {n["id"]: n for n in g2["nodes"]}
    assert set(by_id) < set(nodes2)
    for local in ("owner:payments-api", "slo:payments-api", "adr:20", "iface:payments-api:ledger"):
        assert ids[local] in nodes2, local
    assert nodes2[ids["adr:2"]]["state"] == "retired"
    assert nodes2[ids["adr:2"]]["label"].endswith("[retired]")
    assert int(page.inner_text("#node-count")) == len(g2["nodes"]) + len(g2["entities"])
    w.shot("explore-expanded")

    # The atomised retrospective: its six parts derive from it, each edge signed.
    note = ids["retro:2026q3"]
    page.evaluate("(id) => window.graphsvcExplorer.openAtom(id)", note)
    page.wait_for_function(
        "() => window.graphsvcExplorer.cy.edges(\"[kind = 'derives_from']\").length === 6",
        timeout=30_000,
    )
    assert page.url.endswith(f"/explore?atom={note}")  # shareable, and no token in it
    g3 = _graph(page)
    assert {e["target"] for e in g3["edges"] if e["kind"] == "derives_from"} == {note}
    assert {n["state"] for n in g3["nodes"] if n["id"] == note} == {"archived"}
    lineage = page.locator("#side-lineage li").all_inner_texts()
    assert len(lineage) == 6 and all("signed (key ed25519:" in t for t in lineage)
    # Each edge's signature is checked by the server (typed lineageGraph).
    page.wait_for_function(
        "() => document.querySelectorAll('#side-lineage .sig.verified').length === 6",
        timeout=15_000,
    )
    assert all(
        "signature verified" in t for t in page.locator("#side-lineage li").all_inner_texts()
    )
    w.shot("explore-lineage")

    # Read panel: what read would pack, with tokens of the budget.
    page.fill("#read-q", "why are idempotency keys kept for seven days")
    page.fill("#read-budget", "400")
    page.click("#read-form button")
    page.wait_for_selector("#read-out .read-summary", timeout=60_000)
    summary = page.inner_text("#read-out .read-summary")
    assert " of 400 tokens used" in summary
    used = int(summary.split(" of ")[0])
    assert 0 < used <= 400
    assert page.locator("#read-out .read-items li").count() >= 1
    w.shot("explore-read")

    # An error replaces the drawing: no stale graph under it.
    page.evaluate("() => window.graphsvcExplorer.openAtom('no-such-atom')")
    page.wait_for_selector("#graph-error:not([hidden])", timeout=15_000)
    assert "NOT_FOUND" in page.inner_text("#graph-error")
    assert page.evaluate("() => window.graphsvcExplorer.cy.nodes().length") == 0
    assert page.locator("#cy").is_hidden()
    w.shot("explore-error")

    assert w.errors == [], w.errors
    # The missing atom answers a GraphQL error (HTTP 200): since the refused sign-in
    # (checked above), no request of the page failed.
    assert w.failed == [], w.failed
    w.close()


@pytest.mark.req("ENT-5")
def test_explorer_draws_entities_by_type_and_colours_atoms_by_them(
    browser: Any, live_server: Any, team: dict[str, Any]
) -> None:
    ids = team["ids"]
    token = live_server.token_for(team["binding"])
    w = Watched(browser, live_server.url)
    page = w.page
    page.goto(f"{live_server.url}/explore")
    page.evaluate("(t) => sessionStorage.setItem('graphsvc.explore.token', t)", token)
    inc = ids["inc:2230"]
    page.goto(f"{live_server.url}/explore?atom={inc}")
    page.wait_for_function(_DRAWN, arg=1, timeout=30_000)
    g = _graph(page)
    ents = {e["id"]: e for e in g["entities"]}
    # The incident's neighbours (trigger, cause, detection, mitigation, follow-ups,
    # timeline) all name INC-2230: one diamond ties them together.
    assert "entity:inc-2230" in ents
    # An entity type is a shape (colour means what "colour atoms by" says).
    shapes = {e["type"]: e["shape"] for e in ents.values()}
    assert all(shapes[e["type"]] == e["shape"] for e in ents.values())
    assert len(set(shapes.values())) == len(shapes)
    assert ents["entity:inc-2230"]["type"] == "IDENTIFIER"
    assert ents["entity:inc-2230"]["shape"] == "tag"
    tied = {m["source"] for m in g["mentions"] if m["target"] == "entity:inc-2230"}
    assert {inc, ids["inc:2230:cause"], ids["inc:2230:fix"]} <= tied
    legend = page.inner_text("#legend")
    assert "entities (shape = type):" in legend and "identifier" in legend
    entities_list = page.inner_text("#side-entities")
    assert "INC-2230" in entities_list and "ingest-worker" in entities_list
    w.shot("explore-entities")

    # Colour atoms by the entity they share: the incident's atoms share one colour.
    page.select_option("#colour-mode", "entity")
    g2 = _graph(page)
    group = {g2["colours"][a] for a in (inc, ids["inc:2230:cause"], ids["inc:2230:fix"])}
    assert len(group) == 1 and group != {"#3b82c4"}
    assert "atoms coloured by the entity they share:" in page.inner_text("#legend")
    # At 1440×900 the whole legend is seen, and the colour key (which entity each fill
    # means) sits right under the states, above the roles that may scroll.
    legend_fits = page.evaluate(
        "() => { const l = document.getElementById('legend');"
        " return l.scrollHeight <= l.clientHeight + 1; }"
    )
    assert legend_fits, "the legend is cut off"
    rows = page.eval_on_selector_all("#legend > div", "rows => rows.map(r => r.id)")
    assert rows.index("legend-colour-key") < rows.index("role-filter")
    w.shot("explore-entities-coloured")

    # An entity opens in the side panel with the atoms that mention it.
    page.evaluate("() => window.graphsvcExplorer.cy.getElementById('entity:inc-2230').emit('tap')")
    page.wait_for_function(
        "() => document.querySelectorAll('#side-in li').length >= 5", timeout=15_000
    )
    assert page.inner_text("#side-meta").startswith("entity · identifier · key inc-2230")
    assert "mentioned ×1 by" in page.inner_text("#side-in")
    # An entity has no revisions, citations, lineage or links of its own: no empty
    # headings stand for them, and its atoms are under "Mentioned by".
    assert page.inner_text("#side-in-head") == "Mentioned by"
    for hidden in ("#side-cites", "#side-lineage-head", "#side-out", "#side-entities"):
        assert not page.is_visible(hidden), hidden
    w.shot("explore-entity-panel")
    # Opening an atom again brings its sections back.
    page.evaluate("(id) => window.graphsvcExplorer.cy.getElementById(id).emit('tap')", inc)
    page.wait_for_function(
        "() => document.getElementById('side-in-head').textContent === 'Incoming links'",
        timeout=15_000,
    )
    assert page.is_visible("#side-out") and page.is_visible("#side-lineage-head")
    assert w.errors == [], w.errors
    assert w.failed == [], w.failed
    w.close()


# ------------------------------------------------ issue 30: a drawing that stays put


def _signed_in(browser: Any, live_server: Any, team: dict[str, Any], path: str) -> Watched:
    w = Watched(browser, live_server.url)
    w.page.goto(f"{live_server.url}/explore")
    token = live_server.token_for(team["binding"])
    w.page.evaluate("(t) => sessionStorage.setItem('graphsvc.explore.token', t)", token)
    w.page.goto(f"{live_server.url}{path}")
    return w


# Pairs of drawn node bodies that overlap.
_OVERLAPS = """() => { const b = window.graphsvcExplorer.cy.nodes(':visible').map(n =>
  n.boundingBox({includeLabels: false, includeOverlays: false})); let k = 0;
  for (let i = 0; i < b.length; i++) for (let j = i + 1; j < b.length; j++)
    if (b[i].x1 < b[j].x2 - 0.5 && b[j].x1 < b[i].x2 - 0.5 && b[i].y1 < b[j].y2 - 0.5
        && b[j].y1 < b[i].y2 - 0.5) k++;
  return k; }"""

_POSITIONS = """() => { const cy = window.graphsvcExplorer.cy;
  return Object.fromEntries(cy.nodes().map(n => [n.id(), n.position()])); }"""

# Where a node is on the page (CSS pixels), and whether it lies inside the canvas.
_ON_PAGE = """(id) => { const cy = window.graphsvcExplorer.cy; const n = cy.getElementById(id);
  const p = n.renderedPosition(); const r = document.getElementById('cy').getBoundingClientRect();
  return {x: r.left + p.x, y: r.top + p.y,
          inside: p.x >= 0 && p.y >= 0 && p.x <= r.width && p.y <= r.height}; }"""

# The next atom to expand: drawn, not expanded, not a ghost or entity; the one fewest
# links from the opened atom, ties by label then id. The graph decides, not the layout
# (positions vary from run to run), so the four expansions are the same in every run.
_NEXT = """() => { const cy = window.graphsvcExplorer.cy; const root = cy.nodes('.root');
  const ents = cy.nodes('.entity');
  const graph = cy.elements().not(ents).not(ents.connectedEdges());
  const hops = graph.dijkstra({root: root, directed: false});
  const cands = cy.nodes().not('.entity').not('.ghost').not('.expanded').not('.filtered')
    .filter(n => Number.isFinite(hops.distanceTo(n)))
    .sort((a, b) => hops.distanceTo(a) - hops.distanceTo(b)
      || String(a.data('label')).localeCompare(String(b.data('label')))
      || (a.id() < b.id() ? -1 : 1));
  return cands.length ? cands[0].id() : null; }"""


@pytest.mark.req("API-5")
def test_expansions_keep_drawn_nodes_still_and_the_opened_atom_in_view(
    browser: Any, live_server: Any, team: dict[str, Any]
) -> None:
    ids = team["ids"]
    root = ids["svc:payments-api"]
    w = _signed_in(browser, live_server, team, f"/explore?atom={root}")
    page = w.page
    page.wait_for_function(_DRAWN, arg=3, timeout=30_000)
    canvas = page.locator("#cy").bounding_box()
    w.shot("explore-stays-0")
    for step in range(1, 5):
        before = page.evaluate(_POSITIONS)
        target = page.evaluate(_NEXT)
        assert target, step
        at = page.evaluate(_ON_PAGE, target)
        if not at["inside"]:  # bring it into view the way a reader would: Focus on it
            page.evaluate(
                "(id) => window.graphsvcExplorer.cy.center(window.graphsvcExplorer.cy"
                ".getElementById(id))",
                target,
            )
            at = page.evaluate(_ON_PAGE, target)
        count = sum(1 for n in before if not n.startswith("entity:"))
        page.mouse.dblclick(at["x"], at["y"])  # a real double click expands it
        page.wait_for_function(
            "(id) => window.graphsvcExplorer.cy.getElementById(id).hasClass('expanded')"
            " && document.getElementById('graph-status').textContent.includes('added')",
            arg=target,
            timeout=30_000,
        )
        page.wait_for_function(_DRAWN, arg=0, timeout=30_000)
        after = page.evaluate(_POSITIONS)
        moved = {
            n: round(abs(after[n]["x"] - p["x"]) + abs(after[n]["y"] - p["y"]), 2)
            for n, p in before.items()
            if n in after
        }
        # The expanded node stays where the reader saw it; others move only to make
        # room (issue 49), and no two node bodies overlap.
        assert moved[target] < 3, (step, moved[target])
        assert page.evaluate(_OVERLAPS) == 0, step
        # Atoms stay (entity diamonds follow the selection: shared or the selected one's).
        assert sum(1 for n in after if not n.startswith("entity:")) >= count
        # The opened atom is still on screen, and the canvas kept its size.
        assert page.evaluate(_ON_PAGE, root)["inside"], step
        assert page.locator("#cy").bounding_box() == canvas, step
        w.shot(f"explore-stays-{step}")

    # Fit: every node in view; the labels level of detail draws are readable (≥ 10 px).
    page.click("#fit-btn")
    page.wait_for_timeout(300)  # the label restyle runs on the next animation frame
    sizes = page.evaluate(
        """() => { const cy = window.graphsvcExplorer.cy;
             return cy.nodes().not('.entity').not('.nolabel').map(n =>
               parseFloat(n.renderedStyle('font-size'))); }"""
    )
    assert sizes and min(sizes) >= 10, sizes
    assert page.locator("#zoom-hint").is_hidden()
    assert page.evaluate(_ON_PAGE, root)["inside"]
    w.shot("explore-stays-fit")
    assert w.errors == [], w.errors
    assert w.failed == [], w.failed
    w.close()


@pytest.mark.req("API-5")
def test_a_click_right_after_an_expansion_selects_its_node(
    browser: Any, live_server: Any, team: dict[str, Any]
) -> None:
    ids = team["ids"]
    root = ids["adr:12"]
    w = _signed_in(browser, live_server, team, f"/explore?atom={root}")
    page = w.page
    page.wait_for_function(_DRAWN, arg=3, timeout=30_000)
    first = ids["svc:payments-api"]
    at = page.evaluate(_ON_PAGE, first)
    page.mouse.dblclick(at["x"], at["y"])
    # The expansion has finished (its status line is up, the view has moved if it had
    # to): the case is the click in the next ~110 ms, which used to be lost.
    page.wait_for_function(
        "(id) => window.graphsvcExplorer.cy.getElementById(id).hasClass('expanded')"
        " && / added/.test(document.getElementById('graph-status').textContent)",
        arg=first,
        timeout=30_000,
    )
    # At once (no wait for anything to settle): a click on another drawn node.
    # (any other atom on screen, well inside the canvas)
    second = page.evaluate(
        """(first) => { const cy = window.graphsvcExplorer.cy; const w = cy.width(),
             h = cy.height();
           const n = cy.nodes().not('.entity').not('.ghost').filter(n => { const p =
             n.renderedPosition(); return n.id() !== first && p.x > 40 && p.y > 40
             && p.x < w - 40 && p.y < h - 40; }).sort((a, b) => a.id() < b.id() ? -1 : 1);
           return n.length ? n[0].id() : null; }""",
        first,
    )
    assert second
    at2 = page.evaluate(_ON_PAGE, second)
    page.mouse.click(at2["x"], at2["y"])
    page.wait_for_function(
        "(id) => document.getElementById('side-meta').textContent.startsWith(id)",
        arg=second,
        timeout=30_000,
    )
    assert page.evaluate("(id) => window.graphsvcExplorer.cy.getElementById(id).selected()", second)
    w.shot("explore-click-after-expand")
    assert w.errors == [], w.errors
    w.close()


@pytest.mark.req("API-5")
def test_titles_hover_role_filter_links_at_and_status_line(
    browser: Any, live_server: Any, team: dict[str, Any]
) -> None:
    ids = team["ids"]
    root = ids["inc:2230"]
    w = _signed_in(browser, live_server, team, f"/explore?atom={root}")
    page = w.page
    page.wait_for_function(_DRAWN, arg=3, timeout=30_000)
    g = _graph(page)
    labels = [n["label"] for n in g["nodes"] if "ghost" not in n["cls"]]
    # Short titles: a first clause, never the 48-character cut of issue 30.
    assert all(len(lbl) <= 70 for lbl in labels), labels
    timeline = [lbl for lbl in labels if "timeline" in lbl]
    assert timeline and len(set(timeline)) == len(timeline), timeline  # told apart by time
    # Hover shows the full text.
    at = page.evaluate(_ON_PAGE, root)
    page.mouse.move(at["x"], at["y"])
    page.wait_for_selector("#hover-tip:not([hidden])", timeout=5_000)
    full = page.evaluate("(id) => window.graphsvcExplorer.cy.getElementById(id).data('full')", root)
    assert page.inner_text("#hover-tip") == full and len(full) > len(labels[0])
    w.shot("explore-hover")
    page.mouse.move(5, 5)
    page.wait_for_selector("#hover-tip", state="hidden", timeout=5_000)

    # The role filter: untick a role, its links (and atoms only they reached) go.
    roles = page.locator("#role-filter input[type=checkbox]")
    assert roles.count() >= 2
    role = roles.first.get_attribute("data-role")
    roles.first.uncheck()
    hidden = page.evaluate(
        '(r) => window.graphsvcExplorer.cy.edges(`[role = "${r}"]`).every(e =>'
        " e.hasClass('filtered') && e.style('display') === 'none')",
        role,
    )
    assert hidden
    assert "hidden by the role filter" in page.inner_text("#nodelist-wrap summary")
    w.shot("explore-role-filter")
    roles.first.check()
    assert page.evaluate("() => window.graphsvcExplorer.cy.elements('.filtered').length") == 0

    # Expand once, then switch "links at": the expansion is kept, drawn nodes stay.
    first = ids["inc:2230:cause"]
    page.evaluate("(id) => window.graphsvcExplorer.expand(id)", first)
    page.wait_for_function(_DRAWN, arg=0, timeout=30_000)
    before = page.evaluate(_POSITIONS)
    canvas = page.locator("#cy").bounding_box()
    page.select_option("#version", "LOGICAL")
    page.wait_for_function(
        "() => document.getElementById('graph-status').textContent.includes('kept')",
        timeout=30_000,
    )
    expanded = page.evaluate(
        "() => window.graphsvcExplorer.cy.nodes('.expanded').map(n => n.id()).sort()"
    )
    assert expanded == sorted([root, first])
    after = page.evaluate(_POSITIONS)
    assert all(
        abs(after[n]["x"] - p["x"]) + abs(after[n]["y"] - p["y"]) < 3
        for n, p in before.items()
        if n in after
    )
    assert page.evaluate(
        "() => window.graphsvcExplorer.cy.edges(\"[kind = 'link']\").every(e =>"
        " e.data('at') === 'logical' || e.data('at') === 'observed')"
    )

    # A gibberish search says its hits are weak; a 5,000-character query keeps the
    # status to one line and the canvas where it was.
    page.fill("#q", "qzxvvq wplkjh")
    page.keyboard.press("Enter")
    page.wait_for_selector("#hits .hit", timeout=30_000)
    assert page.inner_text("#search-status").startswith("All weak matches")
    assert page.locator("#hits .hit.weak").count() == page.locator("#hits .hit").count()
    w.shot("explore-weak-search")
    line = page.locator("#search-status").bounding_box()
    page.fill("#q", "payments " * 555)
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.getElementById('search-status').textContent.includes('hit')",
        timeout=60_000,
    )
    assert page.locator("#search-status").bounding_box()["height"] <= line["height"] + 1
    assert page.locator("#cy").bounding_box() == canvas
    w.shot("explore-long-query")
    assert w.errors == [], w.errors
    assert w.failed == [], w.failed
    w.close()


@pytest.mark.req("API-5", "RD-2")
def test_read_panel_names_left_out_roots_with_their_reason_and_text(
    browser: Any, live_server: Any, service: Service, team: dict[str, Any]
) -> None:
    binding = team["binding"]
    # A query whose read at a small budget leaves a root out (its closure does not fit).
    chosen = None
    for q in (
        "why are idempotency keys kept for seven days",
        "payments-api failover",
        "postgres primary failover incident",
        "ledger outbox replay",
    ):
        for budget in (300, 500, 800):
            r = service.read(binding, ReadRequest(q, budget))
            if r.to_json()["diagnostics"]["selection"]["leftOut"]:
                chosen = (q, budget, r.to_json())
                break
        if chosen:
            break
    assert chosen, "no read in the team corpus leaves a root out"
    q, budget, doc = chosen
    w = _signed_in(browser, live_server, team, "/explore")
    page = w.page
    page.wait_for_selector("#whoami:not([hidden])", timeout=10_000)
    page.fill("#read-q", q)
    page.fill("#read-budget", str(budget))
    page.click("#read-form button")
    page.wait_for_selector("#read-out .read-summary", timeout=60_000)
    out = page.inner_text("#read-out")
    assert "left out" in out and "Left out:" in out
    assert "required closure does not fit the budget" in out
    # Items are named by their text's title, never by an id stub like "5553d4a6…".
    names = page.locator("#read-out li button").all_inner_texts()
    assert names and not any(
        len(n) == 9 and n.endswith("…") and all(c in "0123456789abcdef" for c in n[:8])
        for n in names
    ), names
    left = doc["diagnostics"]["selection"]["leftOut"][0]
    atom_id, rev = left.rsplit("@", 1)
    text = service.inspect(binding, InspectRequest(atom_id, rev=int(rev))).atom.text
    assert any(text.startswith(n.rstrip("…")) for n in names), (names, text[:60])
    w.shot("explore-read-left-out")
    assert w.errors == [], w.errors
    w.close()


@pytest.mark.req("API-5")
def test_lineage_redirects_to_the_explorer_with_the_lineage_drawn(
    browser: Any, live_server: Any, team: dict[str, Any]
) -> None:
    note = team["ids"]["retro:2026q3"]
    w = _signed_in(browser, live_server, team, f"/lineage?atom={note}")
    page = w.page
    page.wait_for_function(
        "() => window.graphsvcExplorer.cy.edges(\"[kind = 'derives_from']\").length === 6",
        timeout=30_000,
    )
    assert "/explore?atom=" + note in page.url
    page.wait_for_function(
        "() => document.querySelectorAll('#side-lineage li').length === 6", timeout=15_000
    )
    w.shot("explore-from-lineage")
    assert w.errors == [], w.errors
    w.close()


@pytest.mark.req("API-5", "API-1")
def test_graphiql_runs_a_pasted_document_at_once(browser: Any, live_server: Any) -> None:
    """Run right after pasting: the pasted document's own operation runs (GraphiQL's
    operation name lags behind the editor), and an error shows as GraphQL JSON."""
    w = Watched(browser, live_server.url)
    page = w.page
    page.goto(f"{live_server.url}/graphql")
    page.wait_for_selector(".graphiql-execute-button", timeout=30_000)
    editor = page.locator(".graphiql-query-editor .CodeMirror").first

    def paste_and_run(doc: str) -> str:
        editor.click()
        page.keyboard.press("Control+A")
        page.keyboard.insert_text(doc)
        page.click(".graphiql-execute-button")  # at once
        result = page.locator(".result-window")
        result.get_by_text('"data"').or_(result.get_by_text('"errors"')).first.wait_for(
            timeout=30_000
        )
        page.wait_for_timeout(200)
        text: str = result.inner_text()
        return text

    first = paste_and_run("query First { health }")
    assert '"schemaVersion"' in first, first
    second = paste_and_run("query Second { health }")
    assert '"schemaVersion"' in second and "OPERATION_NOT_FOUND" not in second, second
    w.shot("graphiql-pasted")
    # Without a token (the Headers tab still holds the placeholder): the server's
    # GraphQL JSON error, shown as such, never a JSON parse error of a plain-text body.
    bad = paste_and_run("query Third { nosuchfield }")
    doc = json.loads(bad.replace("\xa0", " "))
    assert doc["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED", doc
    assert "Unexpected token" not in bad and "is not valid JSON" not in bad
    w.shot("graphiql-pasted-error")
    w.close()


# ------------------------------------ issue 30: the opened atom shows its head revision


def _shot(w: Watched, tmp_path: Path, name: str) -> Path:
    """A screenshot under the test's tmp dir (and in $GRAPHSVC_SHOTS_COPY when set)."""
    path = tmp_path / f"{name}.png"
    w.page.screenshot(path=str(path))
    if SHOTS_COPY:
        Path(SHOTS_COPY).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(SHOTS_COPY) / path.name)
    return path


_NODE = """(id) => { const n = window.graphsvcExplorer.cy.getElementById(id);
  return {rev: n.data('rev'), label: n.data('label'), full: n.data('full')}; }"""

_LINKS = """() => window.graphsvcExplorer.cy.edges("[kind = 'link']").map(e => ({
  source: e.source().id(), target: e.target().id(), role: e.data('role'), at: e.data('at'),
  label: e.data('label')}))"""


def _click_node(page: Any, atom_id: str, *, double: bool = False) -> None:
    """A real click on a drawn node (a double click expands it)."""
    at = page.evaluate(_ON_PAGE, atom_id)
    if not at["inside"]:
        page.evaluate(
            "(id) => window.graphsvcExplorer.cy.center(window.graphsvcExplorer.cy"
            ".getElementById(id))",
            atom_id,
        )
        at = page.evaluate(_ON_PAGE, atom_id)
    if double:
        page.mouse.dblclick(at["x"], at["y"])
    else:
        page.mouse.click(at["x"], at["y"])


@pytest.mark.req("API-5")
def test_an_opened_atom_shows_its_head_when_a_neighbour_pins_an_older_revision(
    browser: Any, live_server: Any, service: Service, human: Binding, tmp_path: Path
) -> None:
    """A runbook in two revisions; an incident links to rev 1 (at: observed, pinned); a
    postmortem links to both (logical). Opening the runbook from its search hit (r2),
    then expanding the postmortem and the incident, leaves the runbook's node and side
    panel at rev 2 (head); the pinned link is labelled "pinned r1" on its edge."""
    first = "Runbook for the orion queue: restart the consumer"
    second = "Runbook for the orion queue, v2: drain the queue, then restart the consumer"
    a = write(service, human, [new("a", first)]).changes["a"]
    a_id = a.atom_id
    pinned = [{"role": "cites", "target": {"ref": ref(a), "at": "observed"}}]
    b = write(service, human, [new("b", "Incident 9: the orion queue stalled", links=pinned)])
    b_id = b.changes["b"].atom_id
    assert write(service, human, [revise("a", ref(a), second)]).changes["a"].rev == 2
    about = [
        {"role": "about", "target": {"ref": ref(a_id, 2), "at": "logical"}},
        {"role": "about", "target": {"ref": ref(b.changes["b"]), "at": "logical"}},
    ]
    c = write(service, human, [new("c", "Postmortem of incident 9", links=about)])
    c_id = c.changes["c"].atom_id

    w = Watched(browser, live_server.url)
    page = w.page
    page.goto(f"{live_server.url}/explore")
    page.fill("#token", live_server.token_for(human))
    page.keyboard.press("Enter")
    page.wait_for_selector("#whoami:not([hidden])", timeout=10_000)
    page.fill("#q", "orion queue runbook")
    page.keyboard.press("Enter")
    page.wait_for_selector("#hits .hit", timeout=30_000)
    hit = page.locator(f'#hits .hit[data-atom-id="{a_id}"]')
    assert "r2" in hit.inner_text()
    _shot(w, tmp_path, "explore-rev-search")

    def panel_at_head() -> None:
        page.wait_for_function(
            "(id) => document.getElementById('side-meta').textContent.startsWith(id)",
            arg=a_id,
            timeout=30_000,
        )
        assert " · rev 2 (head) · " in page.inner_text("#side-meta")
        assert page.inner_text("#side-text") == second
        assert page.locator("#rev-pick option").all_inner_texts() == ["rev 2 (head)", "rev 1"]
        assert page.evaluate(_NODE, a_id) == {
            "rev": 2,
            "label": "Runbook for the orion queue, v2",
            "full": second,
        }

    hit.click()
    page.wait_for_function(_DRAWN, arg=1, timeout=30_000)
    panel_at_head()
    _shot(w, tmp_path, "explore-rev-opened")

    # Expand the postmortem (it brings the incident), then the incident: its pinned
    # link reaches rev 1 of the runbook, which must not take over the runbook's node.
    for atom_id in (c_id, b_id):
        _click_node(page, atom_id, double=True)
        page.wait_for_function(
            "(id) => document.getElementById('side-meta').textContent.startsWith(id)"
            " && window.graphsvcExplorer.cy.getElementById(id).hasClass('expanded')",
            arg=atom_id,
            timeout=30_000,
        )
        page.wait_for_function(_DRAWN, arg=2, timeout=30_000)
    assert page.evaluate(_NODE, a_id) == {
        "rev": 2,
        "label": "Runbook for the orion queue, v2",
        "full": second,
    }
    edges = {(e["source"], e["target"], e["role"]): e for e in page.evaluate(_LINKS)}
    assert edges[(b_id, a_id, "cites")]["label"] == "cites · pinned r1"
    assert edges[(c_id, a_id, "about")]["label"] == "about"
    assert "cites · observed → " in page.inner_text("#side-out")
    assert "r1 · pinned (head is r2)" in page.inner_text("#side-out")
    _shot(w, tmp_path, "explore-rev-pinned-edge")

    # Back on the runbook: still its head.
    _click_node(page, a_id)
    panel_at_head()

    # Only an explicit pick shows an older revision, in the panel and on the node.
    page.select_option("#rev-pick", "1")
    page.wait_for_function(
        "() => document.getElementById('side-meta').textContent.includes('rev 1 (superseded)')",
        timeout=15_000,
    )
    assert page.inner_text("#side-text") == first
    assert page.evaluate(_NODE, a_id)["rev"] == 1
    _shot(w, tmp_path, "explore-rev-picked-1")
    page.select_option("#rev-pick", "2")
    page.wait_for_function(
        "() => document.getElementById('side-meta').textContent.includes('rev 2 (head)')",
        timeout=15_000,
    )
    assert page.evaluate(_NODE, a_id)["rev"] == 2
    assert w.errors == [], w.errors
    assert w.failed == [], w.failed
    w.close()


@pytest.mark.req("API-5")
def test_the_status_line_takes_no_room_and_the_canvas_keeps_its_height(
    browser: Any, live_server: Any, team: dict[str, Any], tmp_path: Path
) -> None:
    ids = team["ids"]
    root = ids["adr:12"]
    w = _signed_in(browser, live_server, team, f"/explore?atom={root}")
    page = w.page
    page.wait_for_function(_DRAWN, arg=3, timeout=30_000)
    page.wait_for_function(
        "() => document.getElementById('graph-status').textContent === ''", timeout=30_000
    )
    # No message: the status line is not shown (no empty strip under the time bar).
    assert page.locator("#status-line").is_hidden()
    quiet = page.locator("#cy").bounding_box()
    _shot(w, tmp_path, "explore-status-empty")
    _click_node(page, ids["svc:payments-api"], double=True)
    page.wait_for_function(
        "() => / added/.test(document.getElementById('graph-status').textContent)",
        timeout=30_000,
    )
    assert page.locator("#status-line").is_visible()
    assert page.locator("#cy").bounding_box() == quiet
    _shot(w, tmp_path, "explore-status-message")
    # The message clears again (a fresh drawing): the canvas stays as it was.
    page.evaluate("(id) => window.graphsvcExplorer.openAtom(id)", root)
    page.wait_for_function(
        "() => document.getElementById('graph-status').textContent === ''", timeout=30_000
    )
    page.wait_for_function(_DRAWN, arg=3, timeout=30_000)
    assert page.locator("#status-line").is_hidden()
    assert page.locator("#cy").bounding_box() == quiet
    assert w.errors == [], w.errors
    w.close()
