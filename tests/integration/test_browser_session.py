"""An explorer session a person keeps open (issue 49), scripted in Debian's chromium.

Search "retry storm" in the team demo corpus, open the top hit, expand six times, and
check in the page what a reader sees: node boxes never overlap, few drawn labels
overlap (before and after Fit), Fit shows every node, a click selects without adding,
a double click expands and Ctrl+Z takes it back, node and link colours share no
colour but greys, and the time bar's midpoint draws fewer atoms without an error box
while Now restores the drawing. Screenshots of each step go to ``test-results/``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from test_browser import SHOTS, Watched, browser  # noqa: F401  (the module's Chromium fixture)

from graphsvc.core.binding import Binding
from graphsvc.seed import load_team_corpus
from graphsvc.service import Service

MAX_LABEL_OVERLAPS = 5

pytestmark = [pytest.mark.slow, pytest.mark.req("API-5")]


# What the page draws, measured in the page: pairs of visible node bodies that overlap,
# pairs of drawn labels that overlap (a label is drawn when it has text, is not made
# transparent by level of detail and its rendered size reaches min-zoomed-font-size),
# and the nodes whose body is not wholly inside the canvas.
_MEASURE = """() => {
  const cy = window.graphsvcExplorer.cy; const z = cy.zoom();
  const hit = (a, b) => a.x1 < b.x2 - 0.5 && b.x1 < a.x2 - 0.5
    && a.y1 < b.y2 - 0.5 && b.y1 < a.y2 - 0.5;
  const pairs = (boxes) => { let n = 0; const which = [];
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++)
      if (hit(boxes[i].b, boxes[j].b)) { n++; which.push(boxes[i].id + ' / ' + boxes[j].id); }
    return {n, which: which.slice(0, 12)}; };
  const nodes = cy.nodes(':visible');
  const bodies = nodes.map(n => ({id: n.id(), b: n.boundingBox({includeLabels: false,
    includeOverlays: false})}));
  const drawn = (e) => { const text = e.pstyle('label').strValue;
    if (!text) return false;
    if (e.pstyle('text-opacity').value === 0 || e.pstyle('opacity').value === 0) return false;
    return e.pstyle('font-size').pfValue * z >= e.pstyle('min-zoomed-font-size').pfValue; };
  const labels = cy.elements(':visible').filter(drawn).map(e => ({id: e.id(),
    b: e.boundingBox({includeNodes: false, includeEdges: false, includeLabels: true,
      includeOverlays: false})}));
  const w = cy.width(), h = cy.height();
  const outside = nodes.filter(n => { const r = n.renderedBoundingBox({includeLabels: false,
    includeOverlays: false}); return r.x1 < 0 || r.y1 < 0 || r.x2 > w || r.y2 > h; });
  return {nodes: nodes.length, bodies: pairs(bodies), labels: pairs(labels),
          drawnLabels: labels.length, outside: outside.map(n => n.id()), zoom: z};
}"""

# Labels made transparent by level of detail that cytoscape still rasterises into its
# shared label textures (it does so at full opacity whenever font-size × texture scale
# reaches min-zoomed-font-size; the largest scale it caches at is 8). Such a label,
# drawn there past its box, shows as stray letters at the end of the label cached
# beside it: after Fit, "ADR-011 (api-gateway,A" with the "A" of a hidden "ADR-003 …".
_HIDDEN_RASTERISED = """() => window.graphsvcExplorer.cy.elements(':visible')
  .filter(e => e.pstyle('label').strValue && e.pstyle('text-opacity').value === 0
    && e.pstyle('font-size').pfValue * 8 >= e.pstyle('min-zoomed-font-size').pfValue)
  .map(e => e.id() + ' ' + JSON.stringify(e.pstyle('label').strValue))"""

_ATOMS = """() => window.graphsvcExplorer.cy.nodes().not('.entity').not('.ghost')
  .filter(n => n.visible()).map(n => n.id()).sort()"""

# The next atom to expand: drawn, not expanded, fewest links from the opened atom, then
# the most drawn links (hubs grow the drawing most), then by label: the graph decides,
# not the layout or the ids, so every run expands the same atoms.
_NEXT = """() => { const cy = window.graphsvcExplorer.cy; const root = cy.nodes('.root');
  const ents = cy.nodes('.entity');
  const atoms = cy.elements().not(ents).not(ents.connectedEdges());
  const hops = atoms.dijkstra({root: root, directed: false});
  const c = cy.nodes().not('.entity').not('.ghost').not('.expanded')
    .filter(n => Number.isFinite(hops.distanceTo(n)))
    .sort((a, b) => hops.distanceTo(a) - hops.distanceTo(b)
      || b.connectedEdges("[kind != 'mentions']").length
         - a.connectedEdges("[kind != 'mentions']").length
      || String(a.data('label')).localeCompare(String(b.data('label'))));
  return c.length ? c[0].id() : null; }"""

# An atom well inside the part of the canvas no panel covers (page coordinates).
_CLICKABLE = """(wantExpanded) => { const ex = window.graphsvcExplorer; const cy = ex.cy;
  const a = ex.freeArea(); const r = document.getElementById('cy').getBoundingClientRect();
  const c = cy.nodes().not('.entity').not('.ghost').filter(n => n.visible()
      && n.hasClass('expanded') === wantExpanded && !n.selected()).filter(n => {
    const p = n.renderedPosition(); return p.x > a.x1 + 30 && p.x < a.x2 - 30
      && p.y > a.y1 + 50 && p.y < a.y2 - 30; })
    .sort((x, y) => y.degree(false) - x.degree(false) || (x.id() < y.id() ? -1 : 1));
  return c.map(n => ({id: n.id(), x: r.left + n.renderedPosition().x,
                      y: r.top + n.renderedPosition().y})); }"""

_COLOURS = """() => { const cy = window.graphsvcExplorer.cy;
  const hex = (c) => { const m = /rgb\\((\\d+),\\s*(\\d+),\\s*(\\d+)\\)/.exec(c);
    return m ? m.slice(1).map(Number) : null; };
  const nodes = new Set(cy.nodes(':visible').map(n => n.pstyle('background-color').strValue));
  const links = new Set(cy.edges(':visible').map(e => e.pstyle('line-color').strValue));
  const grey = (c) => { const v = hex(c); return v && Math.max(...v) - Math.min(...v) <= 24; };
  return {nodes: [...nodes], links: [...links],
          shared: [...nodes].filter(c => links.has(c) && !grey(c))}; }"""


@pytest.fixture(scope="module")
def team(service: Service) -> Binding:
    subject = f"t-session-{uuid.uuid4().hex[:8]}"
    load_team_corpus(service, subject=subject, dated=True)  # a history to travel in
    return Binding(subject, "default", "human", "browser")


def _shot(w: Watched, name: str) -> None:
    w.page.wait_for_timeout(400)  # cytoscape redraws resized labels when idle
    w.shot(f"session-{name}")


def _quiet(page: Any) -> None:
    """Wait until no expansion, layout or animation is running."""
    page.wait_for_function(
        "() => !window.graphsvcExplorer.cy.nodes().some(n => n.animated())"
        " && !/…$/.test(document.getElementById('graph-status').textContent)",
        timeout=30_000,
    )


def test_a_session_of_six_expansions_stays_readable(
    browser: Any,  # noqa: F811  (the fixture imported above)
    live_server: Any,
    team: Binding,
) -> None:
    w = Watched(browser, live_server.url)  # console errors, failed and off-host requests
    page = w.page
    page.goto(f"{live_server.url}/explore")
    page.fill("#token", live_server.token_for(team))
    page.keyboard.press("Enter")
    page.wait_for_selector("#whoami:not([hidden])", timeout=10_000)

    # Search, open the top hit.
    page.fill("#q", "retry storm")
    page.keyboard.press("Enter")
    page.wait_for_selector("#hits .hit", timeout=30_000)
    top = page.locator("#hits .hit").first
    assert "retry storm" in top.inner_text().lower()
    top.click()
    page.wait_for_function(
        "() => window.graphsvcExplorer.cy.nodes('.root').length === 1", timeout=30_000
    )
    _quiet(page)
    _shot(w, "0-opened")
    first = page.evaluate(_MEASURE)
    assert first["bodies"]["n"] == 0, first

    # Six expansions, each of the atom nearest the opened one not expanded yet.
    for step in range(1, 7):
        target = page.evaluate(_NEXT)
        assert target, step
        page.evaluate("(id) => window.graphsvcExplorer.expand(id)", target)
        page.wait_for_function(
            "(id) => window.graphsvcExplorer.cy.getElementById(id).hasClass('expanded')",
            arg=target,
            timeout=30_000,
        )
        _quiet(page)
        _shot(w, f"{step}-expanded")
    before_fit = page.evaluate(_MEASURE)
    assert page.evaluate(_HIDDEN_RASTERISED) == []
    assert before_fit["nodes"] >= 20, before_fit
    assert before_fit["bodies"]["n"] == 0, before_fit["bodies"]
    assert before_fit["labels"]["n"] <= MAX_LABEL_OVERLAPS, before_fit["labels"]

    page.click("#fit-btn")
    page.wait_for_timeout(800)  # the restyle runs on the next frame, labels redraw when idle
    after_fit = page.evaluate(_MEASURE)
    _shot(w, "7-fit")
    assert after_fit["outside"] == [], after_fit
    assert after_fit["bodies"]["n"] == 0, after_fit["bodies"]
    assert after_fit["labels"]["n"] <= MAX_LABEL_OVERLAPS, after_fit["labels"]
    assert after_fit["drawnLabels"] >= 5, after_fit  # level of detail still names things
    assert page.evaluate(_HIDDEN_RASTERISED) == []  # no stray letters beside a label
    # What was measured, beside the screenshots (for a person, not an assertion).
    (SHOTS / "session-measures.json").write_text(
        json.dumps({"beforeFit": before_fit, "afterFit": after_fit}, indent=1)
    )

    # A click selects and adds nothing.
    atoms = page.evaluate(_ATOMS)
    spot = page.evaluate(_CLICKABLE, False)[0]
    page.mouse.click(spot["x"], spot["y"])
    page.wait_for_function(
        "(id) => document.getElementById('side-meta').textContent.startsWith(id)",
        arg=spot["id"],
        timeout=30_000,
    )
    page.wait_for_timeout(300)  # a double click would have started by now
    assert page.evaluate(_ATOMS) == atoms
    assert page.evaluate(
        "(id) => window.graphsvcExplorer.cy.getElementById(id).selected()", spot["id"]
    )
    _shot(w, "8-click-selects")

    # A double click expands; Ctrl+Z returns to the set before it.
    grown: list[str] = []
    for _ in range(6):  # the first atom whose expansion adds a node (places move)
        spot = page.evaluate(_CLICKABLE, False)[0]
        page.mouse.dblclick(spot["x"], spot["y"])
        page.wait_for_function(
            "(id) => window.graphsvcExplorer.cy.getElementById(id).hasClass('expanded')",
            arg=spot["id"],
            timeout=30_000,
        )
        _quiet(page)
        grown = page.evaluate(_ATOMS)
        if len(grown) > len(atoms):
            break
        atoms = grown
    assert len(grown) > len(atoms), "no double click added a node"
    _shot(w, "9-double-click-expands")
    page.keyboard.press("Control+z")
    page.wait_for_function(
        "(n) => window.graphsvcExplorer.cy.nodes().not('.entity').not('.ghost')"
        ".filter(x => x.visible()).length === n",
        arg=len(atoms),
        timeout=10_000,
    )
    assert page.evaluate(_ATOMS) == atoms
    assert "undid" in page.inner_text("#graph-status")
    _shot(w, "10-undo")

    colours = page.evaluate(_COLOURS)
    assert colours["shared"] == [], colours

    # The time bar: its midpoint draws fewer atoms, no error box; Now restores.
    history = page.evaluate("() => window.graphsvcTime.history()")
    assert history and history["end"] > history["start"], history
    mid = (history["start"] + history["end"]) / 2
    page.evaluate("(ms) => window.graphsvcTime.setAsOf(new Date(ms).toISOString())", mid)
    _quiet(page)
    past = page.evaluate(_ATOMS)
    _shot(w, "11-time-midpoint")
    assert page.locator("#graph-error").is_hidden()
    assert 0 < len(past) < len(atoms), (len(past), len(atoms))
    assert "as of" in page.inner_text("#asof-status")
    page.click("#asof-now")
    page.wait_for_function(
        "() => document.getElementById('asof-status').textContent === 'showing now'",
        timeout=30_000,
    )
    _quiet(page)
    assert page.evaluate(_ATOMS) == atoms
    _shot(w, "12-now")
    assert w.errors == [], w.errors
    assert w.failed == [], w.failed
    w.close()
