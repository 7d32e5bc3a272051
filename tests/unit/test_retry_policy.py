"""The store's one retry loop (``graphsvc.store.connection._retrying``), without a server.

Auto-commit queries retry a failure the driver calls retryable for the driver's retry
time; managed transactions retry a lost deadlock for the transient budget; neither
pauses past the request's deadline. The attempts are plain functions that fail on
cue, so what is counted is how many times the work ran and what was raised.
"""

from __future__ import annotations

import pytest
from neo4j.exceptions import ServiceUnavailable, TransientError

from graphsvc.errors import StoreError
from graphsvc.store.connection import _deadlocked, _retryable, _retrying
from graphsvc.telemetry.request_scope import scope


class _Flaky:
    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "done"


def _deadlock() -> StoreError:
    cause = TransientError("deadlock")
    cause._neo4j_code = "Neo.TransientError.Transaction.DeadlockDetected"
    err = StoreError("write failed")
    err.__cause__ = cause
    return err


def test_a_retryable_failure_runs_again_until_it_succeeds() -> None:
    work = _Flaky([ServiceUnavailable("down"), ServiceUnavailable("down")])
    assert _retrying(work, _retryable, budget_s=5.0) == "done"
    assert work.calls == 3


def test_a_failure_the_policy_does_not_accept_is_raised_at_once() -> None:
    work = _Flaky([ValueError("a bug, not an outage")])
    with pytest.raises(ValueError):
        _retrying(work, _retryable, budget_s=5.0)
    assert work.calls == 1
    plain = _Flaky([StoreError("constraint")])
    with pytest.raises(StoreError):
        _retrying(plain, _deadlocked, budget_s=5.0)
    assert plain.calls == 1


def test_the_budget_ends_the_retries_with_the_last_failure() -> None:
    # Pauses of 50, 100, 200 ms fit in 0.5 s; the next (400 ms) does not.
    work = _Flaky([ServiceUnavailable(f"down {i}") for i in range(10)])
    with pytest.raises(ServiceUnavailable, match="down 3"):
        _retrying(work, _retryable, budget_s=0.5)
    assert work.calls == 4


def test_a_deadlock_is_retried_but_never_past_the_requests_deadline() -> None:
    work = _Flaky([_deadlock(), _deadlock()])
    assert _retrying(work, _deadlocked, budget_s=10.0) == "done"
    assert work.calls == 3
    late = _Flaky([_deadlock() for _ in range(10)])
    with scope("r1", timeout_s=0.01), pytest.raises(StoreError):
        _retrying(late, _deadlocked, budget_s=10.0)
    assert late.calls == 1
