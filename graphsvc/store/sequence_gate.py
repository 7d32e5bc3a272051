"""One transaction at a time per subject of this process takes the change sequence.

Numbering a change takes the subject's ``ChangeSequence`` write lock until commit
(:mod:`graphsvc.store.changes`), so a subject's writers commit one after the other
whatever happens here. With many writers waiting, Neo4j's lock manager spends CPU on
each of them (docs/performance.md, "Requests per second"); a thread blocked on a
Python lock spends none. So a write transaction of this process takes the subject's
gate just before numbering its change (:func:`enter`) and gives it back once the
transaction has committed or rolled back (:func:`scope`): the process's other writers
of that subject wait here, their transactions open, instead of in Neo4j.

The gate only moves the queue; it decides nothing. Writers in other processes still
queue in Neo4j. A waiter gives up after :data:`WAIT_S` and queues in Neo4j as before,
so a cycle through the gate (which Neo4j's deadlock detection cannot see) lasts no
longer than that. Subjects share a fixed set of locks by hash, so the memory is bounded
whatever the number of subjects; two subjects on one lock only wait for each other
inside this process.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["WAIT_S", "enter", "scope"]

# Longer than one subject's queue of a process's resolver threads normally takes
# (16 × ~30 ms commits), short against a request's deadline.
WAIT_S = 2.0
_GATES = tuple(threading.Lock() for _ in range(256))
# The gates the running transaction attempt holds; None outside a write transaction.
_HELD: ContextVar[list[threading.Lock] | None] = ContextVar("sequence_gate_held", default=None)


@contextmanager
def scope() -> Iterator[None]:
    """Around one write transaction (all its attempts): gates taken inside are given
    back when it ends, committed or not."""
    held: list[threading.Lock] = []
    token = _HELD.set(held)
    try:
        yield
    finally:
        _HELD.reset(token)
        for gate in reversed(held):
            gate.release()


def enter(subject: str) -> None:
    """Wait for ``subject``'s gate (outside a :func:`scope`: nothing to do). A retried
    attempt of the same transaction already holds it."""
    held = _HELD.get()
    if held is None:
        return
    gate = _GATES[zlib.crc32(subject.encode()) % len(_GATES)]
    if gate in held:
        return
    if gate.acquire(timeout=WAIT_S):
        held.append(gate)
