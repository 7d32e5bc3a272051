"""GraphQL ``{ health }`` never waits behind data requests in the resolvers' pool."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from graphsvc.api.context import Context
from graphsvc.api.schema import HEALTH_THREAD_PREFIX, build_schema
from graphsvc.core.views import Health
from graphsvc.keys.auth import AuthTable
from graphsvc.service import Service


def test_health_answers_while_every_resolver_thread_is_busy(service: Service) -> None:
    schema = build_schema(service.settings)
    context = Context(service=service, auth=AuthTable({}), authorization=None)
    seen: list[str] = []
    original = service.health

    def recording() -> Health:
        seen.append(threading.current_thread().name)
        return original()

    async def main() -> Any:
        loop = asyncio.get_running_loop()
        # The resolvers' pool (the loop's default executor, as the app sizes it)
        # with its only thread held by a data request that does not finish.
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphsvc-worker")
        loop.set_default_executor(pool)
        release = threading.Event()
        busy = asyncio.ensure_future(asyncio.to_thread(release.wait))
        try:
            # A safety net only: with health in the busy pool this never returns.
            return await asyncio.wait_for(
                schema.execute("{ health }", context_value=context), timeout=120
            )
        finally:
            release.set()
            await busy
            pool.shutdown()

    service.health = recording  # type: ignore[method-assign]
    # Young kept facts would answer on the loop without a thread (a live server in the
    # same session keeps them fresh); this test is about the thread the read takes, so
    # the resolver's own look at them finds none (health() itself still may).
    kept_health = service.kept_health
    looks: list[bool] = []

    def first_look_finds_none() -> Health | None:
        looks.append(True)
        return None if len(looks) == 1 else kept_health()

    service.kept_health = first_look_finds_none  # type: ignore[method-assign]
    try:
        result = asyncio.run(main())
    finally:
        del service.health
        del service.kept_health
    assert result.errors is None, result.errors
    assert result.data["health"]["status"] == "ok"
    assert seen and seen[0].startswith(HEALTH_THREAD_PREFIX)
