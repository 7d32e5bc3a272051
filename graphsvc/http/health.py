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

from graphsvc.errors import DeadlineExceededError, GraphsvcError
from graphsvc.service import Service

__all__ = ["Health"]

log = logging.getLogger("graphsvc.api")


class Health:
    """The two probes of one served process.

    Args:
        service: the served Service (its database is checked by readiness, its
            embedding model reported).
        retry_after_s: the ``Retry-After`` of a 503.
    """

    def __init__(self, service: Service, retry_after_s: int) -> None:
        self._service = service
        embedder = service.embedder
        self._model = {"model": embedder.model_name, "dimension": embedder.dimension}
        self._retry_after = str(retry_after_s)
        # Two threads: one probe in flight per load balancer is the usual case, and a
        # stuck probe must not stop the next one. Never the resolvers' pool.
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="graphsvc-ready")
        self._timeout_s = service.readiness_timeout_s

    async def healthz(self, _: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(self, _: Request) -> Response:
        loop = asyncio.get_running_loop()
        model = dict(self._model)
        try:
            checks = await asyncio.wait_for(
                loop.run_in_executor(self._pool, self._service.readiness), self._timeout_s
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
