"""What one HTTP request carries down to the store and the logs: id, deadline, outcome.

The ASGI layer opens a :class:`RequestScope` per request; code below it (resolvers
on worker threads, the store's side threads) reads it through :func:`current`.
``asyncio.to_thread`` copies the context, so the scope reaches worker threads; the
scope object itself is shared (mutable), so what the GraphQL layer records
(operation, error codes) is seen by the ASGI layer when it answers.

Outside a request (CLI, tests calling the Service) there is no scope: no deadline.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["RequestScope", "current", "entered", "new_request_id", "remaining_s", "scope"]


@dataclass
class RequestScope:
    """One request's id, its deadline (``time.monotonic()`` seconds) and outcome."""

    request_id: str
    deadline: float | None = None
    operation: str = "unknown"
    codes: list[str] = field(default_factory=list)
    # What the HTTP front door prepared for the GraphQL layer (the parsed, validated
    # document: graphsvc.api.document_limits.Prepared), or None.
    prepared: object | None = None
    # CPU per stage while ``GRAPHSVC_STAGE_TIMER`` is on (graphsvc.telemetry.stages).
    stage_ns: list[tuple[str, int]] = field(default_factory=list)


_CURRENT: ContextVar[RequestScope | None] = ContextVar("graphsvc_request", default=None)


def current() -> RequestScope | None:
    """The scope of the request being served, or None outside one."""
    return _CURRENT.get()


def remaining_s() -> float | None:
    """Seconds left before the current request's deadline (may be ≤ 0); None: no limit."""
    sc = _CURRENT.get()
    if sc is None or sc.deadline is None:
        return None
    return sc.deadline - time.monotonic()


def new_request_id() -> str:
    return uuid.uuid4().hex


@contextmanager
def scope(request_id: str, timeout_s: float | None) -> Iterator[RequestScope]:
    """Make a new scope current for the duration of the block."""
    sc = RequestScope(
        request_id=request_id,
        deadline=None if timeout_s is None else time.monotonic() + timeout_s,
    )
    token = _CURRENT.set(sc)
    try:
        yield sc
    finally:
        _CURRENT.reset(token)


@contextmanager
def entered(sc: RequestScope) -> Iterator[RequestScope]:
    """Make an existing scope current again, in a task or thread that did not inherit it.

    The MCP transport serves a request in a task of its own session manager, whose
    context is not the HTTP request's; the tool handler re-enters the request's
    scope so the deadline and the answered codes are the request's.
    """
    token = _CURRENT.set(sc)
    try:
        yield sc
    finally:
        _CURRENT.reset(token)
