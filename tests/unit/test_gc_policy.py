"""The serving process's collector policy (graphsvc/http/gc_policy.py, GRAPHSVC_GC_POLICY)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from graphsvc.errors import InvalidInputError
from graphsvc.http.gc_policy import FROZEN_THRESHOLDS, apply_gc_policy
from graphsvc.settings import Settings


@pytest.fixture()
def restored_gc() -> Iterator[None]:
    """Put this process's collector back as it was after the test."""
    thresholds = gc.get_threshold()
    frozen_before = gc.get_freeze_count()
    try:
        yield
    finally:
        if gc.get_freeze_count() != frozen_before:
            gc.unfreeze()
        gc.set_threshold(*thresholds)


def test_frozen_moves_the_live_heap_out_of_collections_and_sets_the_thresholds(
    restored_gc: None,
) -> None:
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    before = [[i] for i in range(3)]
    assert apply_gc_policy("frozen") is True
    after = [[i] for i in range(3)]
    # gc.get_objects() lists what collections scan: not what was alive at the freeze,
    # but what was made after it.
    scanned = {id(o) for o in gc.get_objects()}
    assert gc.get_freeze_count() > 0
    assert not any(id(o) in scanned for o in before)
    assert all(id(o) in scanned for o in after)
    assert gc.get_threshold() == FROZEN_THRESHOLDS


def test_default_leaves_the_collector_alone(restored_gc: None) -> None:
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    assert apply_gc_policy("default") is False
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == (700, 10, 10)


def test_the_setting_defaults_to_frozen_and_refuses_other_values() -> None:
    assert Settings.from_env({}).http.gc_policy == "frozen"
    assert Settings.from_env({"GRAPHSVC_GC_POLICY": "default"}).http.gc_policy == "default"
    with pytest.raises(InvalidInputError, match="GRAPHSVC_GC_POLICY"):
        Settings.from_env({"GRAPHSVC_GC_POLICY": "off"})


_ARENAS = """
import ctypes, json, sys, tempfile, threading
from graphsvc.http.gc_policy import limit_malloc_arenas
limited = limit_malloc_arenas(int(sys.argv[1]))

def churn() -> None:
    for _ in range(20_000):
        bytearray(4096)

threads = [threading.Thread(target=churn) for _ in range(16)]
for t in threads:
    t.start()
for t in threads:
    t.join()
libc = ctypes.CDLL("libc.so.6")
libc.fopen.restype = ctypes.c_void_p
with tempfile.NamedTemporaryFile(suffix=".xml") as out:
    f = libc.fopen(out.name.encode(), b"w")
    libc.malloc_info(0, ctypes.c_void_p(f))
    libc.fclose(ctypes.c_void_p(f))
    heaps = open(out.name).read().count("<heap nr=")
print(json.dumps({"limited": limited, "heaps": heaps}))
"""


def _arenas(limit: int) -> dict[str, object]:
    import json
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-c", _ARENAS, str(limit)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    out: dict[str, object] = json.loads(run.stdout)
    return out


def test_malloc_arenas_are_capped_for_threads_started_after() -> None:
    # Sixteen threads allocating at once in a fresh process (this one's arenas are
    # not the test's to change): capped at two, glibc keeps at most two heaps.
    capped = _arenas(2)
    assert capped["limited"] is True and 1 <= int(str(capped["heaps"])) <= 2, capped
    assert _arenas(0)["limited"] is False  # 0 leaves glibc's default alone
