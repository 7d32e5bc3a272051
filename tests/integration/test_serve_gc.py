"""``serve`` applies its collector policy (GRAPHSVC_GC_POLICY) when the app starts serving.

Real uvicorn with the app's lifespan, real Neo4j and model (the heap that is frozen).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import httpx
import pytest
from serve_support import serving

from graphsvc.http.app import create_app
from graphsvc.http.gc_policy import FROZEN_THRESHOLDS
from graphsvc.keys.auth import AuthTable
from graphsvc.runtime import service_for
from graphsvc.service import Service
from graphsvc.store.connection import Database


@pytest.fixture()
def python_gc() -> Iterator[None]:
    """CPython's collector for the test, and this process's collector back after it."""
    thresholds = gc.get_threshold()
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


@pytest.mark.parametrize("policy", ["frozen", "default"])
def test_serving_applies_the_configured_collector_policy_at_start(
    service: Service, db: Database, python_gc: None, policy: str
) -> None:
    svc = service_for(
        service.settings.with_(gc_policy=policy), db, service.embedder, service.tokenizer
    )
    app = create_app(svc, AuthTable({}))
    # Nothing happens when the app is built, only when it starts serving.
    assert gc.get_freeze_count() == 0
    with serving(app) as url:
        assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200
        if policy == "frozen":
            # The model and libraries loaded before serving are out of every collection.
            assert gc.get_freeze_count() > 100_000
            assert gc.get_threshold() == FROZEN_THRESHOLDS
        else:
            assert gc.get_freeze_count() == 0
            assert gc.get_threshold() == (700, 10, 10)
