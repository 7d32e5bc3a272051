"""``/healthz`` (liveness) and ``/readyz`` (readiness), each on a path of its own.

Liveness is answered on the event loop with no I/O: it says the process serves
HTTP, and never waits behind data requests in the worker pool. Readiness asks
Neo4j (reachable, schema version current) on a small executor of its own and
reports the embedding model; any failure is HTTP 503 with ``Retry-After`` and the
error's code, so a load balancer stops sending requests until Neo4j is back.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from graphsvc.embed import Embedder
from graphsvc.errors import DeadlineExceededError, GraphsvcError
from graphsvc.store.connection import Database
from graphsvc.store.meta import Readiness, readiness

__all__ = ["Health"]

log = logging.getLogger("graphsvc.api")


class Health:
    """The two probes of one served process.

    Args:
        db: the served Database (checked by readiness).
        embedder: the served embedder (its model is reported).
        retry_after_s: the ``Retry-After`` of a 503.
    """

    def __init__(self, db: Database, embedder: Embedder, retry_after_s: int) -> None:
        self._db = db
        self._model = {"model": embedder.model_name, "dimension": embedder.dimension}
        self._retry_after = str(retry_after_s)
        # Two threads: one probe in flight per load balancer is the usual case, and a
        # stuck probe must not stop the next one. Never the resolvers' pool.
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="graphsvc-ready")
        self._timeout_s = db.acquisition_timeout_s + db.max_retry_time_s + 1.0

    async def healthz(self, _: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(self, _: Request) -> Response:
        loop = asyncio.get_running_loop()
        model = dict(self._model)
        try:
            checks: Readiness = await asyncio.wait_for(
                loop.run_in_executor(self._pool, readiness, self._db), self._timeout_s
            )
        except TimeoutError:
            return self._unready("TIMEOUT", "Neo4j did not answer the readiness check", model)
        except DeadlineExceededError as exc:
            return self._unready(exc.code, exc.message, model)
        except GraphsvcError as exc:
            return self._unready(exc.code, "Neo4j is not reachable", model)
        if not checks["schemaCurrent"]:
            return self._unready(
                "SCHEMA_OUTDATED", "the database schema version is not this build's", model
            )
        return JSONResponse({"status": "ready", **checks, "embedding": model})

    def _unready(self, code: str, message: str, model: dict[str, Any]) -> Response:
        log.warning("not ready", extra={"code": code})
        return JSONResponse(
            {"status": "unavailable", "code": code, "message": message, "embedding": model},
            status_code=503,
            headers={"Retry-After": self._retry_after},
        )

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
