"""The served process's garbage-collector policy (``GRAPHSVC_GC_POLICY``).

A serving process holds hundreds of thousands of tracked objects before its first
request: the embedding model's libraries (torch and transformers when the ONNX
graphs were not cached yet), the schema, the driver. CPython's full (generation 2)
collection walks all of them; measured on the typed graph walk (bench/graph_walk.py,
docs/performance.md) one took 270–430 ms and came every 4–5 walks, which was the
whole p95 tail, while a walk itself takes about 40 ms.

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
"""

from __future__ import annotations

import gc

__all__ = ["FROZEN_THRESHOLDS", "GC_POLICIES", "apply_gc_policy"]

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
