"""Browser test of the explorer's time bar and read replay (explore_time.js).

Debian's ``/usr/bin/chromium`` through Playwright (``executable_path``), the live
graphsvc on loopback and the real Neo4j; screenshots under ``test-results/screenshots``.
Off-host requests are aborted and fail the test (the page works offline).
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from write_support import frozen_clock, new, ref, revise, write

from graphsvc.core.binding import Binding
from graphsvc.core.requests import ReadRequest
from graphsvc.service import Service

CHROMIUM = "/usr/bin/chromium"
SHOTS = Path(os.environ.get("GRAPHSVC_TEST_RESULTS", "test-results")) / "screenshots"

_GRAPH = """() => { const cy = window.graphsvcExplorer.cy; return cy.nodes().map(n => ({
  id: n.id(), label: n.data('label'), cls: n.classes()})); }"""


_MISSING = """(named) => named.filter(([o, f]) => typeof (window[o] || {})[f] !== 'function')"""


def _documented_functions() -> list[list[str]]:
    """``[object, function]`` for each ``window.graphsvc….name(`` docs/explorer.md names,
    and the ``gql`` it says the explorer exposes."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "explorer.md").read_text()
    named = sorted({*re.findall(r"window\.(graphsvc\w+)\.(\w+)\(", text)})
    assert "exposes `gql` on `window.graphsvcExplorer`" in text
    assert ("graphsvcTime", "setAsOf") in named and ("graphsvcExplorer", "refetch") in named
    return [[o, f] for o, f in [*named, ("graphsvcExplorer", "gql")]]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not shutil.which(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing")
        pytest.skip(f"{CHROMIUM} is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        yield b
        b.close()


def _local(epoch: float) -> str:
    """A ``datetime-local`` value in the browser's zone (the test's, same machine)."""
    return datetime.fromtimestamp(epoch).strftime("%Y-%m-%dT%H:%M:%S")


@pytest.mark.req("API-5", "MAN-1", "DOC-1")
def test_time_bar_redraws_as_of_then_and_replay_shows_what_changed(
    browser: Any, live_server: Any, service: Service, human: Binding
) -> None:
    now = time.time()
    with frozen_clock(service) as clock:
        clock[0] = now - 3 * 3600
        t = write(service, human, [new("t", "Runbook: restart the payments queue")]).changes["t"]
        clock[0] = now - 2 * 3600
        links = [
            {"role": "follows", "target": {"ref": ref(t), "at": "logical"}},
            {"role": "cites", "target": {"ref": ref(t), "at": "observed"}},
        ]
        a = write(service, human, [new("a", "Incident 7: queue stalled", links=links)])
        a_id = a.changes["a"].atom_id
        clock[0] = now - 1 * 3600
        write(service, human, [revise("t", ref(t), "Runbook v2: drain, then restart")])
        clock[0] = now - 1800
        later = [{"role": "about", "target": {"ref": ref(a.changes["a"]), "at": "logical"}}]
        n = write(service, human, [new("n", "Postmortem of incident 7", links=later)])
        n_id = n.changes["n"].atom_id

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    errors: list[str] = []
    host = urlparse(live_server.url).netloc
    page.on("pageerror", lambda e: errors.append(str(e)))

    def route(r: Any) -> None:
        if urlparse(r.request.url).netloc == host or r.request.url.startswith("data:"):
            r.continue_()
        else:
            errors.append(f"off-host request {r.request.url}")
            r.abort()

    page.route("**/*", route)
    page.goto(f"{live_server.url}/explore")
    page.fill("#token", live_server.token_for(human))
    page.keyboard.press("Enter")
    page.wait_for_selector("#whoami:not([hidden])", timeout=10_000)
    page.evaluate("(id) => window.graphsvcExplorer.openAtom(id)", a_id)
    page.wait_for_function(
        "(id) => window.graphsvcExplorer.cy.getElementById(id).length > 0", arg=n_id
    )
    drawn_now = {x["id"] for x in page.evaluate(_GRAPH)}
    assert {a_id, t.atom_id, n_id} <= drawn_now
    # docs/explorer.md's functions for scripts and add-ons are in the page (DOC-1).
    named = _documented_functions()
    assert page.evaluate(_MISSING, named) == [], named

    # 90 minutes ago: N did not exist; T's head was its first revision.
    page.fill("#asof-date", _local(now - 5400))
    page.dispatch_event("#asof-date", "change")
    page.wait_for_function(
        "() => document.getElementById('asof-status').textContent.includes('changed since')",
        timeout=30_000,
    )
    nodes = {x["id"]: x for x in page.evaluate(_GRAPH)}
    assert n_id not in nodes and {a_id, t.atom_id} <= set(nodes)
    assert "tt-changed" in nodes[t.atom_id]["cls"]
    assert "tt-changed" not in nodes[a_id]["cls"]
    assert "1 drawn atom changed since" in page.inner_text("#asof-status")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "explore-time-bar.png"))

    # Back to now: N is drawn again.
    page.click("#asof-now")
    page.wait_for_function(
        "(id) => window.graphsvcExplorer.cy.getElementById(id).length > 0", arg=n_id
    )
    page.wait_for_function(
        "() => document.getElementById('asof-status').textContent === 'showing now'",
        timeout=30_000,
    )

    # Replay a read after one of its presented atoms was revised.
    read = service.read(human, ReadRequest("payments queue runbook incident", 4096))
    presented = {r["atomId"] for r in read.manifest["presentation"]["revisions"]}
    assert a_id in presented
    write(service, human, [revise("a", ref(a_id, 1), "Incident 7: queue stalled for 40 min")])
    page.fill("#replay-id", read.manifest["id"])
    page.click("#replay-form button")
    page.wait_for_selector(".replay-items li", timeout=20_000)
    text = page.inner_text("#replay-out")
    assert "revised since" in text and "Incident 7: queue stalled" in text
    assert "a read today would differ" in text
    page.locator("#replay-panel").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "explore-replay.png"))
    assert errors == []
    page.close()
