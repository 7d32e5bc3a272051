"""ASGI app: GraphQL at ``/graphql`` (GraphiQL on), probes, metrics, limits and logs.

Every HTTP request passes :class:`_Http` once: it gives the request an id
(``X-Request-Id``, taken from the client when it is a plain token, else new) and a
deadline (``request_timeout_s``) that the store turns into Neo4j transaction
timeouts; a ``/graphql`` request whose head shows an unknown token, or a body
larger than a request without a token may carry, is refused (401) before its body is
read; it reads the body up to ``max_request_bytes`` before the app runs, so a
body over the limit, with or without Content-Length, is one 413 and the app never
starts a response; a ``/graphql`` request then passes the front door
(:mod:`graphsvc.http.front_door`: envelope, text, document limits, token, validation,
off the event loop) before strawberry sees it; it answers 504 when the deadline
passes before a response started; and it writes the access log line and the request
metrics with the code the answer carried.

HTTP status of a GraphQL answer (GraphQL-over-HTTP allows these for
``application/json``): 401 with ``WWW-Authenticate`` when a token is missing or
unknown, 503 with ``Retry-After`` when Neo4j is unavailable or the front door is
full (SERVER_BUSY), 504 when the request's time ran out; every other coded error
(PERMISSION_DENIED included) is 200.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from typing import Any, cast

import orjson
import strawberry
from cross_web import HTTPException
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from strawberry.asgi import GraphQL

from graphsvc.api.context import Context
from graphsvc.api.document_limits import DocumentLimits
from graphsvc.api.schema import build_schema
from graphsvc.embed.query_vectors import configure as configure_queries
from graphsvc.http.explore_page import explore_route
from graphsvc.http.front_door import FrontDoor, Refusal
from graphsvc.http.gc_policy import apply_gc_policy
from graphsvc.http.health import Health
from graphsvc.http.lineage_page import lineage_route
from graphsvc.http.page_headers import html_page
from graphsvc.http.static_assets import graphiql_html, static_mount
from graphsvc.keys.auth import AuthTable
from graphsvc.mcp_api.http import McpHttp
from graphsvc.runtime import instrument
from graphsvc.service import Service
from graphsvc.telemetry.metrics import CONTENT_TYPE, exposition, observe_request
from graphsvc.telemetry.request_scope import RequestScope, current, new_request_id, scope
from graphsvc.telemetry.stages import enable as enable_stages
from graphsvc.telemetry.stages import finish as finish_stages
from graphsvc.telemetry.stages import stage, timed

__all__ = ["create_app", "http_status_for"]

log = logging.getLogger("graphsvc.api")
access_log = logging.getLogger("graphsvc.access")

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
# Non-GraphQL paths get a fixed operation label; anything else is "other".
_PATH_LABELS = {
    "/healthz": "healthz",
    "/readyz": "readyz",
    "/metrics": "metrics",
    "/": "root",
    "/lineage": "lineage-page",
    "/mcp": "mcp",
}


def http_status_for(codes: list[str]) -> int:
    """The HTTP status of a GraphQL answer with these error codes (200 when none map)."""
    if "UNAUTHENTICATED" in codes:
        return 401
    if "STORE_UNAVAILABLE" in codes or "SERVER_BUSY" in codes:
        return 503
    if "TIMEOUT" in codes:
        return 504
    return 200


class _GraphQL(GraphQL[Context, None]):
    def __init__(
        self, service: Service, auth: AuthTable | None, retry_after_s: int, **kw: Any
    ) -> None:
        super().__init__(build_schema(service.settings), graphql_ide="graphiql", **kw)
        self._service = service
        self._auth = auth
        self._retry_after = str(retry_after_s)

    async def __call__(self, scope_: Scope, receive: Receive, send: Send) -> None:
        if scope_["type"] != "http":
            await super().__call__(scope_, receive, send)
            return
        try:
            response = await self.run(Request(scope=scope_, receive=receive))
        except HTTPException as exc:
            # The front door answers these first; any left is still GraphQL JSON.
            code = _HTTP_CODES.get(exc.status_code, "BAD_REQUEST")
            sc = current()
            if sc is not None:
                sc.codes.append(code)
            response = _json_response(
                exc.status_code, [{"message": exc.reason, "extensions": {"code": code}}]
            )
        await response(scope_, receive, send)

    async def get_context(self, request: Any, response: Any) -> Context:
        return Context(
            service=self._service,
            auth=self._auth,
            authorization=request.headers.get("authorization"),
        )

    async def render_graphql_ide(self, request: Any) -> HTMLResponse:
        # GraphiQL from graphsvc's own vendored assets (works offline).
        return html_page(graphiql_html())

    def encode_json(self, data: object) -> bytes:
        # Once, with orjson (a fraction of json.dumps's CPU); what orjson refuses
        # (a lone surrogate, a key that is not a string) goes the standard way.
        with stage("serialise"):
            try:
                return orjson.dumps(data)
            except TypeError:
                return json.dumps(data, separators=(",", ":")).encode()

    def create_response(self, response_data: Any, sub_response: Response) -> Response:
        response = super().create_response(response_data, sub_response)
        answers = response_data if isinstance(response_data, list) else [response_data]
        codes = [
            str((e.get("extensions") or {}).get("code"))
            for answer in answers
            if isinstance(answer, Mapping)
            for e in answer.get("errors") or []
            if isinstance(e, Mapping)
        ]
        status = http_status_for(codes)
        if status != 200:
            response.status_code = status
            if status == 401:
                response.headers["WWW-Authenticate"] = "Bearer"
            if status == 503:
                response.headers["Retry-After"] = self._retry_after
        return response


_HTTP_CODES = {405: "METHOD_NOT_ALLOWED", 415: "UNSUPPORTED_MEDIA_TYPE"}


def _json_response(status: int, errors: list[dict[str, Any]]) -> Response:
    return Response(
        json.dumps({"errors": errors}), status_code=status, media_type="application/json"
    )


class ResolverPool(ThreadPoolExecutor):
    """The resolvers' threads (the loop's default executor, ``asyncio.to_thread``):
    each call timed as stage ``resolve`` while the stage timer is on."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        return super().submit(timed("resolve", fn), *args, **kwargs)


class _TooLarge(Exception):
    pass


class _Http:
    """Request id, deadline, body limit, timeout, access log and metrics (see module)."""

    def __init__(
        self, app: ASGIApp, max_bytes: int, timeout_s: float, front_door: FrontDoor
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s
        self.front_door = front_door

    async def __call__(self, scope_: Scope, receive: Receive, send: Send) -> None:
        if scope_["type"] != "http":
            await self.app(scope_, receive, send)
            return
        headers = dict(scope_.get("headers", []))
        given = headers.get(b"x-request-id", b"").decode("latin-1")
        request_id = given if _REQUEST_ID.match(given) else new_request_id()
        started = time.perf_counter()
        status = 0

        async def send_once(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                if status:
                    return  # never a second response start
                status = int(message["status"])
                sent = list(message.get("headers", []))
                extra = [(b"x-request-id", request_id.encode())]
                if not any(k.lower() == b"x-content-type-options" for k, _ in sent):
                    extra.append((b"x-content-type-options", b"nosniff"))
                message = {**message, "headers": [*sent, *extra]}
            await send(message)

        with scope(request_id, self.timeout_s) as sc:
            try:
                await asyncio.wait_for(
                    self._serve(scope_, headers, receive, send_once, sc), self.timeout_s
                )
            except TimeoutError:
                sc.codes.append("TIMEOUT")
                if not status:
                    await _error(send_once, 504, "TIMEOUT", "request took too long", request_id)
            except Exception:
                log.exception("internal error", extra={"code": "INTERNAL"})
                sc.codes.append("INTERNAL")
                if not status:
                    await _error(send_once, 500, "INTERNAL", "internal error", request_id)
            finally:
                path = str(scope_.get("path", ""))
                operation = sc.operation if path == "/graphql" else _PATH_LABELS.get(path, "other")
                code = sc.codes[0] if sc.codes else "ok"
                seconds = time.perf_counter() - started
                observe_request(operation, code, seconds)
                finish_stages(sc)
                access_log.info(
                    "request",
                    extra={
                        "method": scope_.get("method"),
                        "path": path,
                        "status": status,
                        "operation": operation,
                        "code": code,
                        "ms": round(seconds * 1000, 2),
                    },
                )

    async def _serve(
        self,
        scope_: Scope,
        headers: dict[bytes, bytes],
        receive: Receive,
        send: Send,
        sc: RequestScope,
    ) -> None:
        length = headers.get(b"content-length", b"")
        if length.isdigit() and int(length) > self.max_bytes:
            sc.codes.append("REQUEST_TOO_LARGE")
            await _error(send, 413, "REQUEST_TOO_LARGE", "request body too large", sc.request_id)
            return
        if scope_.get("path") == "/graphql":
            # Who asks, from the head alone: an unknown token, or a large body without
            # one, is refused before the body is read (uvicorn drops what still comes;
            # closing instead could reset the connection before the client reads the 401).
            announced = int(length) if length.isdigit() else 0
            early = self.front_door.before_body(
                headers, announced + len(scope_.get("query_string", b""))
            )
            if early is not None:
                sc.codes.extend(early.codes)
                await _answer(send, early, sc.request_id)
                return
        try:
            body, tail = await self._read_body(receive)
        except _TooLarge:
            sc.codes.append("REQUEST_TOO_LARGE")
            await _error(send, 413, "REQUEST_TOO_LARGE", "request body too large", sc.request_id)
            return
        if scope_.get("path") == "/graphql":
            admitted = await self.front_door.admit(
                str(scope_.get("method", "")), headers, scope_.get("query_string", b""), body
            )
            if isinstance(admitted, Refusal):
                sc.operation = admitted.operation
                sc.codes.extend(admitted.codes)
                await _answer(send, admitted, sc.request_id)
                return
            sc.prepared = admitted
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            if tail is not None:
                return tail
            return await receive()

        await self.app(scope_, replay, send)

    async def _read_body(self, receive: Receive) -> tuple[bytes, Message | None]:
        """The whole body (at most ``max_bytes``), and a disconnect seen while reading.

        Raises:
            _TooLarge: the body is longer than ``max_bytes``.
        """
        parts: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(parts), message
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.max_bytes:
                raise _TooLarge
            parts.append(chunk)
            if not message.get("more_body", False):
                return b"".join(parts), None


async def _error(send: Send, status: int, code: str, message: str, request_id: str) -> None:
    await _answer(
        send,
        Refusal(status, [{"message": message, "extensions": {"code": code}}], [code]),
        request_id,
    )


async def _answer(send: Send, refusal: Refusal, request_id: str) -> None:
    errors = [
        {**e, "extensions": {**(e.get("extensions") or {}), "requestId": request_id}}
        for e in refusal.errors
    ]
    body = json.dumps({"errors": errors}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": refusal.status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *refusal.headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def create_app(
    service: Service,
    auth: AuthTable | None,
    *,
    serving: Callable[[], AbstractContextManager[None]] | None = None,
    close: Callable[[], None] | None = None,
) -> ASGIApp:
    """The whole HTTP surface for one Service.

    Args:
        service: what the requests run against.
        auth: the API tokens (None: every data request is UNAUTHENTICATED).
        serving: entered when the app starts and left when it stops (a worker of
            ``serve --workers``: its replica lease and background jobs).
        close: called last when the app stops (the worker's database connection).
    """
    settings = service.settings
    instrument(service)  # the root wraps the embedder and counts the jobs
    enable_stages(settings.http.stage_timer == "on")
    configure_queries(settings.embedding.query_cache)
    # graphsvc.api.errors logs every GraphQL error once (client errors without a
    # traceback); strawberry's logger would log each again with one.
    logging.getLogger("strawberry.execution").setLevel(logging.CRITICAL)
    graphql = _GraphQL(service, auth, settings.http.retry_after_s)
    front_door = FrontDoor(
        cast(strawberry.Schema, graphql.schema)._schema,
        auth,
        DocumentLimits.from_settings(settings),
        max_json_depth=settings.graphql.max_json_depth,
        inline_bytes=settings.graphql.front_door_inline_bytes,
        anonymous_max_bytes=settings.graphql.anonymous_max_bytes,
        queue=settings.graphql.front_door_queue,
        retry_after_s=settings.http.retry_after_s,
    )
    health = Health(service, settings.http.retry_after_s)
    # MCP beside GraphQL (graphsvc/mcp_api, docs/agents.md): the same tokens and Service,
    # its tools' arguments read from the GraphQL schema's operations.
    mcp = McpHttp(service, auth, cast(strawberry.Schema, graphql.schema)._schema)

    async def root(_: Request) -> Response:
        return RedirectResponse("/graphql")

    async def metrics(_: Request) -> Response:
        return Response(exposition(), media_type=CONTENT_TYPE)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        # Resolvers run in asyncio.to_thread, i.e. the loop's default executor: sized
        # here on purpose instead of Python's min(32, cores + 4).
        pool = ResolverPool(settings.http.worker_threads, thread_name_prefix="graphsvc-worker")
        asyncio.get_running_loop().set_default_executor(pool)
        # Everything is loaded now (the model too): keep it out of later collections.
        apply_gc_policy(settings.http.gc_policy)
        with serving() if serving is not None else nullcontext():
            try:
                async with mcp.running():
                    yield
            finally:
                health.close()
                front_door.close()
                pool.shutdown(wait=False, cancel_futures=True)
        if close is not None:
            close()

    app = Starlette(
        routes=[
            Route("/", root),
            Route("/healthz", health.healthz),
            Route("/readyz", health.readyz),
            Route("/metrics", metrics),
            Route("/graphql", graphql, methods=["GET", "POST"]),
            Route("/mcp", mcp),
            lineage_route(),
            explore_route(),
            static_mount(),
        ],
        lifespan=lifespan,
    )
    return _Http(app, settings.http.max_request_bytes, settings.http.request_timeout_s, front_door)
