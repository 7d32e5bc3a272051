"""CPU per request by operation and stage, for benchmarks (``GRAPHSVC_STAGE_TIMER``).

Off by default: then :func:`stage` hands back one shared no-op context and nothing is
counted or shown. On (a benchmark's serving process), each timed stage adds its
thread's CPU time (``time.thread_time_ns``: waits for Neo4j or for a core are not
counted) to the request's scope, and when the request ends its stages are added to
this process's totals under the request's operation label; ``/metrics`` then shows
``graphsvc_stage_cpu_seconds_total{operation,stage}`` and
``graphsvc_stage_requests_total{operation}`` (``bench/load.py`` divides the one by
the other). Work done for several requests at once (one batched query embedding) is
shared among them equally.

Stages: ``front_door`` (envelope, parse, validation, limits), ``resolve`` (a
resolver's thread: the use case, its Neo4j driver work and ranking), ``ranking``
(part of ``resolve``: candidate legs, fusion, the activation solve), ``embed`` (the
query's embedding, on the embedding thread) and ``serialise`` (the response's JSON).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import ParamSpec, TypeVar

from graphsvc.telemetry.request_scope import RequestScope, current

__all__ = ["add", "enable", "enabled", "exposition_lines", "finish", "stage", "timed"]

P = ParamSpec("P")
T = TypeVar("T")
_ON = False
_NULL: AbstractContextManager[None] = nullcontext()
_LOCK = threading.Lock()
# (operation, stage) → CPU nanoseconds; operation → requests.
_TOTALS: dict[tuple[str, str], int] = {}
_REQUESTS: dict[str, int] = {}


def enable(on: bool) -> None:
    """Turn the timer on or off for this process (the serving process's settings)."""
    global _ON
    _ON = on


def enabled() -> bool:
    """Whether stages are being timed."""
    return _ON


def stage(name: str) -> AbstractContextManager[None]:
    """Time the block's thread CPU as stage ``name`` of the current request (a no-op
    when the timer is off or there is no request)."""
    if not _ON:
        return _NULL
    sc = current()
    if sc is None:
        return _NULL
    return _timed(sc, name)


@contextmanager
def _timed(sc: RequestScope, name: str) -> Iterator[None]:
    t0 = time.thread_time_ns()
    try:
        yield
    finally:
        add(sc, name, time.thread_time_ns() - t0)


def timed(name: str, fn: Callable[P, T]) -> Callable[P, T]:
    """``fn`` wrapped to run as stage ``name`` of the request current now (for a call
    handed to another thread that does not carry the request's context); ``fn``
    itself when the timer is off."""
    sc = current() if _ON else None
    if sc is None:
        return fn

    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        with _timed(sc, name):
            return fn(*args, **kwargs)

    return run


def add(sc: RequestScope | None, name: str, ns: int) -> None:
    """Add ``ns`` of CPU to stage ``name`` of the request ``sc`` (any thread)."""
    if sc is not None and _ON:
        sc.stage_ns.append((name, ns))  # list.append: safe from any thread


def finish(sc: RequestScope) -> None:
    """Add a finished request's stages to the process's totals."""
    if not _ON:
        return
    with _LOCK:
        _REQUESTS[sc.operation] = _REQUESTS.get(sc.operation, 0) + 1
        for name, ns in sc.stage_ns:
            key = (sc.operation, name)
            _TOTALS[key] = _TOTALS.get(key, 0) + ns


def exposition_lines() -> list[str]:
    """The totals in the Prometheus text format (nothing when the timer is off)."""
    if not _ON:
        return []
    with _LOCK:
        totals, requests = dict(_TOTALS), dict(_REQUESTS)
    lines = ["# TYPE graphsvc_stage_cpu_seconds_total counter"]
    lines += [
        f'graphsvc_stage_cpu_seconds_total{{operation="{op}",stage="{name}"}} {ns / 1e9:.9f}'
        for (op, name), ns in sorted(totals.items())
    ]
    lines.append("# TYPE graphsvc_stage_requests_total counter")
    lines += [
        f'graphsvc_stage_requests_total{{operation="{op}"}} {n}'
        for op, n in sorted(requests.items())
    ]
    return lines
