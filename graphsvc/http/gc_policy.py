"""The served process's garbage-collector policy (``GRAPHSVC_GC_POLICY``).

A serving process holds hundreds of thousands of tracked objects before its first
request: the embedding model's libraries (torch and transformers when the ONNX
graphs were not cached yet), the schema, the driver. CPython's full (generation 2)
collection walks all of them, and on the typed graph walk (bench/graph_walk.py) such
pauses were the whole p95 tail, each several times a walk's own time
(docs/performance.md#the-typed-graph-walk-graphql-for-clients).

``frozen`` (the default), applied once when the app starts serving:

- ``gc.collect()`` then ``gc.freeze()``: the startup heap moves to the permanent
  generation, which no later collection scans (its objects are still freed by
  reference counting; only a reference cycle among them would never be
  collected, hence the collection just before);
- thresholds ``(5000, 10, 100)`` instead of ``(700, 10, 10)``: a GraphQL answer
  builds tens of thousands of short-lived objects, most of them freed by
  reference counting before a larger young generation fills, so fewer young
  collections promote them; and a full collection (now only of what was made
  after start) comes after 100 instead of 10 middle ones.

``default`` leaves CPython's collector as it is.

glibc's malloc arenas (``GRAPHSVC_MALLOC_ARENAS``, default 2): glibc gives each thread
that allocates under contention an arena of its own, up to 8 per core, and memory
freed in one arena serves only that arena, so with 16 resolver threads a serving
process kept growing over a soak. Limited to 2 arenas (``mallopt``, from
:func:`limit_malloc_arenas` at the start of ``graphsvc serve``, before any thread
exists) it grows far less at the same throughput (bench/load.py --sample,
docs/performance.md#a-ten-minute-soak).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc

__all__ = ["FROZEN_THRESHOLDS", "GC_POLICIES", "apply_gc_policy", "limit_malloc_arenas"]

GC_POLICIES = ("frozen", "default")
FROZEN_THRESHOLDS = (5000, 10, 100)


def apply_gc_policy(policy: str) -> bool:
    """Apply ``policy`` to this process's collector; True when it changed anything.

    Safe to call more than once (each call freezes what is alive by then).
    """
    if policy != "frozen":
        return False
    gc.collect()
    gc.freeze()
    gc.set_threshold(*FROZEN_THRESHOLDS)
    return True


# mallopt's parameter number for the arena limit (glibc's malloc.h).
_M_ARENA_MAX = -8


def limit_malloc_arenas(arenas: int) -> bool:
    """Cap glibc's malloc arenas at ``arenas`` (0: leave glibc's default); True when
    the cap was set. Arenas already made are kept; threads started later share these.
    Not glibc (or no ``mallopt``): nothing is changed."""
    if arenas <= 0:
        return False
    with contextlib.suppress(OSError, AttributeError):
        return bool(ctypes.CDLL("libc.so.6").mallopt(_M_ARENA_MAX, arenas))
    return False
