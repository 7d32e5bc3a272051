"""Shared test plumbing: records which requirement IDs each test proves.

Every test tagged ``@pytest.mark.req("WR-3")`` is written with its outcome to
``test-results/requirements.json``; ``scripts/validation.py`` turns that into
test-results/VALIDATION.md (SPEC DOC-1).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# CI runs every property test on the same derandomised examples, so a landing is
# never decided by the luck of one draw; run locally without CI=1 to explore new ones.
# No example has a deadline: a deadline is a wall-clock assertion, and on a busy
# two-core machine it failed a pure test (test_model_is_pure_and_deterministic).
settings.register_profile("default", deadline=None)
settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "default")

_RESULTS: dict[str, dict[str, Any]] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    entry = _RESULTS.setdefault(report.nodeid, {"outcome": "not run", "reqs": []})
    if report.when == "call":
        entry["outcome"] = report.outcome
    elif report.outcome != "passed":
        # A failing setup/teardown fails the test; a skip in setup skips it.
        entry["outcome"] = "skipped" if report.skipped else "failed"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        reqs = [str(a) for m in item.iter_markers("req") for a in m.args]
        _RESULTS.setdefault(item.nodeid, {"outcome": "not run", "reqs": []})["reqs"] = reqs


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = Path(os.environ.get("GRAPHSVC_TEST_RESULTS", "test-results")) / "requirements.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(_RESULTS, indent=1, sort_keys=True))
