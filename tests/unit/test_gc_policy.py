"""The serving process's collector policy (graphsvc/api/gc_policy.py, GRAPHSVC_GC_POLICY)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from graphsvc.api.gc_policy import FROZEN_THRESHOLDS, apply_gc_policy
from graphsvc.errors import InvalidInputError
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
