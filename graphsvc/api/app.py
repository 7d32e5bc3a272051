"""ASGI app: GraphQL at ``/graphql`` (GraphiQL on), request size and time limits."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send
from strawberry.asgi import GraphQL

from graphsvc.api.context import Context
from graphsvc.api.explore_page import explore_route
from graphsvc.api.lineage_page import lineage_route
from graphsvc.api.schema import build_schema
from graphsvc.api.static_assets import graphiql_html, static_mount
from graphsvc.auth import AuthTable
from graphsvc.service import Service

__all__ = ["create_app"]


class _GraphQL(GraphQL[Context, None]):
    def __init__(self, service: Service, auth: AuthTable | None, **kw: Any) -> None:
        super().__init__(build_schema(service.settings), graphql_ide="graphiql", **kw)
        self._service = service
        self._auth = auth

    async def get_context(self, request: Any, response: Any) -> Context:
        return Context(
            service=self._service,
            auth=self._auth,
            authorization=request.headers.get("authorization"),
        )

    async def render_graphql_ide(self, request: Any) -> HTMLResponse:
        # GraphiQL from graphsvc's own vendored assets (works offline).
        return HTMLResponse(graphiql_html())


class _Limits:
    """Rejects bodies over ``max_bytes`` (413) and requests over ``timeout_s`` (504)."""

    def __init__(self, app: ASGIApp, max_bytes: int, timeout_s: float) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                await _error(send, 413, "REQUEST_TOO_LARGE", "request body too large")
                return
        seen = 0

        async def limited() -> Any:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                raise _TooLarge
            return message

        try:
            await asyncio.wait_for(self.app(scope, limited, send), self.timeout_s)
        except _TooLarge:
            await _error(send, 413, "REQUEST_TOO_LARGE", "request body too large")
        except TimeoutError:
            await _error(send, 504, "TIMEOUT", "request took too long")


class _TooLarge(Exception):
    pass


async def _error(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"errors": [{"message": message, "extensions": {"code": code}}]}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})


def create_app(service: Service, auth: AuthTable | None) -> ASGIApp:
    """The whole HTTP surface for one Service."""
    graphql = _GraphQL(service, auth)

    async def root(_: Request) -> Response:
        return RedirectResponse("/graphql")

    async def healthz(_: Request) -> Response:
        return JSONResponse(await asyncio.to_thread(service.health))

    app = Starlette(
        routes=[
            Route("/", root),
            Route("/healthz", healthz),
            Route("/graphql", graphql, methods=["GET", "POST"]),
            lineage_route(),
            explore_route(),
            static_mount(),
        ]
    )
    settings = service.settings
    return _Limits(app, settings.max_request_bytes, settings.request_timeout_s)
