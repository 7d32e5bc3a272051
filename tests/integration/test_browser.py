"""Browser tests (issue 17): GraphiQL and ``/explore`` in headless Chromium, offline.

Python ``playwright`` drives Debian's ``/usr/bin/chromium`` (``executable_path``; no
browser download). The live server is the real graphsvc on a loopback port with the
real Neo4j. Screenshots go to ``test-results/`` (CI keeps them as artefacts).

A request to any host other than the live server is aborted and counted as a failure,
so these tests prove the pages need no network.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from graphsvc.core.binding import Binding
from graphsvc.inputs import parse_changes
from graphsvc.seed import DEMO_CORPUS
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
        return path

    def close(self) -> None:
        self.page.close()


@pytest.mark.req("API-5")
def test_graphiql_loads_offline_and_runs_health(browser: Any, live_server: Any) -> None:
    w = Watched(browser, live_server.url)
    page = w.page
    page.goto(f"{live_server.url}/graphql")
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


def _ref(out: Any, cid: str) -> dict[str, Any]:
    view = out.changes[cid]
    return {"atomId": view.atom_id, "rev": view.rev}


def _demo(service: Service, subject: str) -> dict[str, Any]:
    """The demo corpus in ``subject``, plus a revision, a retirement and a citation range."""
    doc = json.loads(DEMO_CORPUS.read_text(encoding="utf-8"))
    human = Binding(subject, "default", "human", "browser")
    out = service.write(human, parse_changes(doc["changes"]))
    ids = {cid: v.atom_id for cid, v in out.changes.items()}
    evap = out.changes["evaporation"]
    revised = service.write(
        human,
        parse_changes(
            [
                {
                    "id": "evaporation",
                    "op": "revise",
                    "target": {"atomId": evap.atom_id, "rev": evap.rev},
                    "content": {
                        "text": "Evaporation turns liquid water into water vapour; about 86% "
                        "of global evaporation happens over the oceans.",
                        "links": [
                            {"role": "part-of", "target": {"ref": _ref(out, "water-cycle")}},
                            {
                                "role": "see-also",
                                "target": {"ref": _ref(out, "transpiration"), "at": "logical"},
                            },
                            {"role": "studied-by", "target": {"local": "hydrology"}},
                        ],
                    },
                    "sources": [
                        {
                            "uri": "https://example.org/hydrology-handbook",
                            "version": "2",
                            "range": {"start": 3, "end": 9, "unit": "line"},
                        }
                    ],
                },
                {
                    "id": "hydrology",
                    "op": "create",
                    "content": {"text": "Hydrology studies the water cycle.", "links": []},
                    "sources": [],
                },
            ]
        ),
    )
    retired_id = ids["condensation"]
    service.write(
        human,
        parse_changes(
            [
                {
                    "id": "r",
                    "op": "retire",
                    "target": {"atomId": retired_id, "rev": out.changes["condensation"].rev},
                }
            ]
        ),
    )
    return {
        "binding": human,
        "ids": ids,
        "evaporation": revised.changes["evaporation"],
        "retired": retired_id,
    }


def _graph(page: Any) -> dict[str, Any]:
    result: dict[str, Any] = page.evaluate(
        """() => { const cy = window.graphsvcExplorer.cy; return {
             nodes: cy.nodes().map(n => ({id: n.id(), label: n.data('label'),
                                          state: n.data('state'), cls: n.classes()})),
             edges: cy.edges().map(e => ({source: e.source().id(), target: e.target().id(),
                                          role: e.data('role'), at: e.data('at'),
                                          required: e.data('required')})),
           }; }"""
    )
    return result


@pytest.mark.req("API-5")
def test_explorer_search_open_expand_side_panel_and_read(
    browser: Any, live_server: Any, service: Service, subject: str
) -> None:
    demo = _demo(service, subject)
    token = live_server.token_for(demo["binding"])
    w = Watched(browser, live_server.url)
    page = w.page
    page.goto(f"{live_server.url}/explore")

    # Sign in: a wrong token is refused in place; the right one is kept in sessionStorage.
    page.fill("#token", "not-a-token")
    page.keyboard.press("Enter")
    page.wait_for_selector("#search-status.error", timeout=10_000)
    assert "UNAUTHENTICATED" in page.inner_text("#search-status")
    page.fill("#token", token)
    page.keyboard.press("Enter")
    page.wait_for_selector("#whoami:not([hidden])", timeout=10_000)
    assert page.evaluate("() => sessionStorage.getItem('graphsvc.explore.token')") == token
    assert token not in page.url

    # Search with the keyboard; hits show score, state and a short text.
    page.fill("#q", "evaporation ocean water vapour")
    page.keyboard.press("Enter")
    page.wait_for_selector("#hits .hit", timeout=30_000)
    hits = page.locator("#hits .hit")
    assert hits.count() >= 3
    first = hits.first.inner_text()
    assert float(first.split()[0]) > 0
    w.shot("explore-search")

    # Open the revised evaporation atom: its neighbourhood is drawn.
    evap_id = demo["evaporation"].atom_id
    page.locator(f'#hits .hit[data-atom-id="{evap_id}"]').click()
    page.wait_for_function("() => window.graphsvcExplorer.cy.nodes().length > 1", timeout=30_000)
    g = _graph(page)
    by_id = {n["id"]: n for n in g["nodes"]}
    assert by_id[evap_id]["label"].startswith("Evaporation turns liquid water")
    assert "root" in by_id[evap_id]["cls"]
    # Rev 2 links part-of water-cycle (observed), see-also transpiration (logical) and
    # studied-by hydrology: three neighbours, three edges out of the opened atom.
    out_edges = {(e["role"], e["at"]) for e in g["edges"] if e["source"] == evap_id}
    assert out_edges == {
        ("part-of", "observed"),
        ("see-also", "logical"),
        ("studied-by", "observed"),
    }
    assert len(g["nodes"]) == 4
    assert all(e["source"] in by_id and e["target"] in by_id for e in g["edges"])
    assert int(page.inner_text("#node-count")) == len(g["nodes"])
    assert int(page.inner_text("#edge-count")) == len(g["edges"])
    legend = page.inner_text("#legend")
    for word in ("active", "retired", "unavailable", "required", "logical", "part-of"):
        assert word in legend

    # Side panel: the full text, the citation range, two revisions to pick from.
    assert "86% of global evaporation" in page.inner_text("#side-text")
    assert "line 3–9" in page.inner_text("#side-cites")
    options = page.locator("#rev-pick option").all_inner_texts()
    assert options == ["rev 2 (head)", "rev 1"]
    page.select_option("#rev-pick", "1")
    page.wait_for_function(
        "() => document.getElementById('side-text').textContent.includes('solar energy')",
        timeout=15_000,
    )
    w.shot("explore-open")

    # Expand a neighbour with a real click on the canvas: more nodes appear.
    before = len(g["nodes"])
    neighbour = by_id[demo["ids"]["water-cycle"]]
    pos = page.evaluate(
        """(id) => { const p = window.graphsvcExplorer.cy.getElementById(id).renderedPosition();
                     const r = document.getElementById('cy').getBoundingClientRect();
                     return {x: r.left + p.x, y: r.top + p.y}; }""",
        neighbour["id"],
    )
    page.mouse.click(pos["x"], pos["y"])
    page.wait_for_function(
        f"() => window.graphsvcExplorer.cy.nodes().length > {before}", timeout=30_000
    )
    g2 = _graph(page)
    assert len(g2["nodes"]) > before
    assert {n["id"] for n in g["nodes"]} <= {n["id"] for n in g2["nodes"]}
    retired = [n for n in g2["nodes"] if n["state"] == "retired"]
    assert [n["id"] for n in retired] == [demo["retired"]]
    assert retired[0]["label"].endswith("[retired]")
    page.wait_for_function(
        "(t) => document.getElementById('side-text').textContent === t",
        arg=service.inspect(demo["binding"], neighbour["id"]).atom.text,
        timeout=15_000,
    )
    w.shot("explore-expanded")

    # Read panel: what read would pack, with tokens of the budget.
    page.fill("#read-q", "how does water get into clouds")
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
    assert "NOT_FOUND" in page.inner_text("#graph-error") or "INVALID_INPUT" in page.inner_text(
        "#graph-error"
    )
    assert page.evaluate("() => window.graphsvcExplorer.cy.nodes().length") == 0
    assert page.locator("#cy").is_hidden()
    w.shot("explore-error")

    assert w.errors == [], w.errors
    # The refused sign-in and the missing atom answer GraphQL errors (HTTP 200), so no
    # request of the page failed.
    assert w.failed == [], w.failed
    w.close()
