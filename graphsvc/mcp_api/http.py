"""MCP over streamable HTTP, mounted on the ``serve`` app at ``/mcp``.

:class:`McpHttp` is an ASGI app in front of the SDK's session manager:

- it authenticates every request with the same ``Authorization: Bearer <token>``
  as GraphQL (:meth:`graphsvc.keys.auth.AuthTable.grant_for`); a missing or unknown
  token is answered 401 with ``WWW-Authenticate: Bearer`` and a JSON-RPC error
  whose ``data`` carries ``{code: UNAUTHENTICATED, message}``, before the MCP
  layer runs; there is no default subject;
- it hands the request's Grant and its request scope (id, deadline, answered
  codes; opened by the app's ``_Http`` layer) to the tool handlers through the
  ASGI scope, since the session manager serves the request in a task of its own;
- the manager is stateless and answers JSON (no server-sent events): every POST is
  one JSON-RPC exchange, so the app's body limit, deadline, access log and
  metrics apply to it as to ``/graphql``, and any replica can answer any request.

Host/Origin (DNS-rebinding) checks are off, as for ``/graphql``: every request
needs the Bearer token, which a rebound page does not have, and the check would
refuse requests behind a reverse proxy that keeps the public Host.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Receive, Scope, Send

from graphsvc.errors import UnauthenticatedError
from graphsvc.keys.auth import AuthTable, Grant
from graphsvc.mcp_api.server import build_server
from graphsvc.service import Service
from graphsvc.telemetry.request_scope import RequestScope, current

__all__ = ["McpHttp"]

_GRANT = "graphsvc.grant"
_SCOPE = "graphsvc.telemetry.request_scope"
_UNAUTHENTICATED = -32001  # JSON-RPC server-defined range


class McpHttp:
    """The ``/mcp`` endpoint (see module docstring); run :meth:`running` in the app's
    lifespan."""

    def __init__(self, service: Service, auth: AuthTable | None) -> None:
        self._auth = auth
        server = build_server(service, _grant_of, scope_of=_scope_of)
        self._manager = StreamableHTTPSessionManager(
            app=server,
            json_response=True,
            stateless=True,
            max_request_body_size=service.settings.http.max_request_bytes,
        )

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The session manager's task group, for the app's lifespan."""
        async with self._manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = dict(scope.get("headers", []))
        authorization = headers.get(b"authorization", b"").decode("latin-1") or None
        try:
            if self._auth is None:
                raise UnauthenticatedError("no API tokens are configured (set GRAPHSVC_AUTH_FILE)")
            grant = self._auth.grant_for(authorization)
        except UnauthenticatedError as exc:
            sc = current()
            if sc is not None:
                sc.codes.append(exc.code)
            await _unauthenticated(send, exc)
            return
        scope = {**scope, _GRANT: grant, _SCOPE: current()}
        await self._manager.handle_request(scope, receive, send)


def _grant_of(ctx: ServerRequestContext[Any, Any]) -> Grant:
    grant = _from_scope(ctx, _GRANT)
    if not isinstance(grant, Grant):
        # Only McpHttp reaches the manager, and it always sets the grant.
        raise UnauthenticatedError("missing Authorization: Bearer <token>")
    return grant


def _scope_of(ctx: ServerRequestContext[Any, Any]) -> RequestScope | None:
    sc = _from_scope(ctx, _SCOPE)
    return sc if isinstance(sc, RequestScope) else None


def _from_scope(ctx: ServerRequestContext[Any, Any], key: str) -> Any:
    request = ctx.request
    asgi_scope = getattr(request, "scope", None)
    return asgi_scope.get(key) if isinstance(asgi_scope, dict) else None


async def _unauthenticated(send: Send, exc: UnauthenticatedError) -> None:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": _UNAUTHENTICATED, "message": exc.message, "data": exc.to_dict()},
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b"Bearer"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
