"""The stage timer (graphsvc/telemetry/stages.py): off, it counts and shows nothing;
on, it adds each request's stage CPU under its operation, shown in /metrics."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graphsvc.telemetry import stages
from graphsvc.telemetry.metrics import exposition
from graphsvc.telemetry.request_scope import scope


@pytest.fixture(autouse=True)
def off_afterwards() -> Iterator[None]:
    yield
    stages.enable(False)


def _busy() -> int:
    return sum(i * i for i in range(20_000))


def test_off_it_times_nothing_and_shows_nothing() -> None:
    stages.enable(False)
    with scope("r-off", None) as sc:
        sc.operation = "search"
        with stages.stage("ranking"):
            _busy()
        assert stages.timed("resolve", _busy) is _busy
        stages.finish(sc)
    assert sc.stage_ns == []
    assert stages.exposition_lines() == []
    assert b"graphsvc_stage_" not in exposition()


def test_on_it_adds_each_stage_under_the_operation() -> None:
    stages.enable(True)
    before = _totals()
    for k in range(2):
        with scope(f"r-{k}", None) as sc:
            sc.operation = "timer-test"
            with stages.stage("ranking"):
                _busy()
            stages.timed("resolve", _busy)()
            stages.finish(sc)
        assert [name for name, _ in sc.stage_ns] == ["ranking", "resolve"]
        assert all(ns > 0 for _, ns in sc.stage_ns)
    after = _totals()
    assert after["requests"] - before.get("requests", 0) == 2
    assert after["ranking"] > before.get("ranking", 0.0)
    assert after["resolve"] > before.get("resolve", 0.0)
    assert b'graphsvc_stage_requests_total{operation="timer-test"}' in exposition()


def test_outside_a_request_nothing_is_added() -> None:
    stages.enable(True)
    with stages.stage("ranking"):
        _busy()
    assert stages.timed("resolve", _busy) is _busy


def _totals() -> dict[str, float]:
    out: dict[str, float] = {}
    for line in stages.exposition_lines():
        if 'operation="timer-test"' not in line:
            continue
        name = line.split('stage="', 1)[1].split('"', 1)[0] if "stage=" in line else "requests"
        out[name] = float(line.rsplit(" ", 1)[1])
    return out
