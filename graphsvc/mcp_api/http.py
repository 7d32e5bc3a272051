"""MCP over streamable HTTP, mounted on the ``serve`` app at ``/mcp``.

:class:`McpHttp` is an ASGI app in front of the SDK's session manager:

- it authenticates every request with the same ``Authorization: Bearer <token>``
  as GraphQL (:meth:`graphsvc.keys.auth.AuthTable.grant_for`); a missing or unknown
  token is answered 401 with ``WWW-Authenticate: Bearer`` and a JSON-RPC error
  whose ``data`` carries ``{code: UNAUTHENTICATED, message}``, before the MCP
  layer runs; there is no default subject;
- it keeps MCP sessions (SPEC §17, MCP-1) itself, in Neo4j
  (:meth:`graphsvc.service.Service.mcp_session_open`): an ``initialize`` request
  opens one and its answer carries the ``Mcp-Session-Id`` header; every later
  request names it (400 without it, 404 once it ended or when it is another
  binding's); ``DELETE`` ends it. Because the session lives in the database, not in
  the process, any replica can answer any request of it;
- it hands the request's Grant, its session id and its request scope (id, deadline,
  answered codes; opened by the app's ``_Http`` layer) to the tool handlers through
  the ASGI scope, since the session manager serves the request in a task of its own;
- behind it, the SDK's manager runs stateless and answers JSON: every POST is one
  JSON-RPC exchange, so the app's body limit, deadline, access log and metrics apply
  to it as to ``/graphql``. graphsvc sends nothing unasked, so ``GET`` (the
  server-to-client event stream of the transport) is 405 with ``Allow: POST,
  DELETE``, as the transport allows;
- the 2026-07-28 protocol era has no sessions, so a request of it is answered
  ``-32022`` (unsupported protocol version) naming the handshake versions, and the
  SDK's clients fall back to the ``initialize`` handshake.

Host/Origin (DNS-rebinding) checks are off, as for ``/graphql``: every request
needs the Bearer token, which a rebound page does not have, and the check would
refuse requests behind a reverse proxy that keeps the public Host.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from graphql import GraphQLSchema
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Receive, Scope, Send

from graphsvc.errors import (
    BadRequestError,
    GraphsvcError,
    MethodNotAllowedError,
    NotFoundError,
    UnauthenticatedError,
)
from graphsvc.keys.auth import AuthTable, Grant
from graphsvc.mcp_api.http_sessions import SessionGate
from graphsvc.mcp_api.server import build_server
from graphsvc.service import Service
from graphsvc.telemetry.request_scope import RequestScope, current

__all__ = ["McpHttp"]

_GRANT = "graphsvc.grant"
_SCOPE = "graphsvc.telemetry.request_scope"
_SESSION = "graphsvc.mcp_session"
_PROFILE = "graphsvc.mcp_profile"
_UNAUTHENTICATED = -32001  # JSON-RPC server-defined range


class McpHttp:
    """The ``/mcp`` endpoint (see module docstring); run :meth:`running` in the app's
    lifespan."""

    def __init__(self, service: Service, auth: AuthTable | None, operations: GraphQLSchema) -> None:
        self._auth = auth
        self._sessions = SessionGate(service)
        server = build_server(
            service,
            _grant_of,
            operations=operations,
            scope_of=_scope_of,
            session_of=_session_of,
            profile_of=_profile_of,
        )
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
            await _refuse(send, exc, 401, [(b"www-authenticate", b"Bearer")])
            return
        try:
            opened = await self._sessions.admit(scope, receive, grant.binding)
        except GraphsvcError as exc:
            status, extra = _STATUS.get(type(exc), (400, []))
            await _refuse(send, exc, status, extra, rpc_code=getattr(exc, "rpc_code", None))
            return
        if opened.ended:
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        scope = {
            **scope,
            _GRANT: grant,
            _SCOPE: current(),
            _SESSION: opened.session_id,
            _PROFILE: opened.profile,
        }
        await self._manager.handle_request(scope, opened.receive, opened.wrap(send))
        await opened.finish(grant.binding)


def _grant_of(ctx: ServerRequestContext[Any, Any]) -> Grant:
    grant = _from_scope(ctx, _GRANT)
    if not isinstance(grant, Grant):
        # Only McpHttp reaches the manager, and it always sets the grant.
        raise UnauthenticatedError("missing Authorization: Bearer <token>")
    return grant


def _session_of(ctx: ServerRequestContext[Any, Any]) -> str | None:
    session_id = _from_scope(ctx, _SESSION)
    return session_id if isinstance(session_id, str) else None


def _profile_of(ctx: ServerRequestContext[Any, Any]) -> str | None:
    profile = _from_scope(ctx, _PROFILE)
    return profile if isinstance(profile, str) else None


def _scope_of(ctx: ServerRequestContext[Any, Any]) -> RequestScope | None:
    sc = _from_scope(ctx, _SCOPE)
    return sc if isinstance(sc, RequestScope) else None


def _from_scope(ctx: ServerRequestContext[Any, Any], key: str) -> Any:
    request = ctx.request
    asgi_scope = getattr(request, "scope", None)
    return asgi_scope.get(key) if isinstance(asgi_scope, dict) else None


# The HTTP status (and headers) of a refusal before the MCP layer runs.
_STATUS: dict[type[GraphsvcError], tuple[int, list[tuple[bytes, bytes]]]] = {
    MethodNotAllowedError: (405, [(b"allow", b"POST, DELETE")]),
    NotFoundError: (404, []),
    BadRequestError: (400, []),
}
_INVALID_REQUEST = -32600


async def _refuse(
    send: Send,
    exc: GraphsvcError,
    status: int,
    headers: list[tuple[bytes, bytes]],
    *,
    rpc_code: int | None = None,
) -> None:
    """Answer ``exc`` as a JSON-RPC error (id null) with graphsvc's code in ``data``."""
    sc = current()
    if sc is not None:
        sc.codes.append(exc.code)
    code = (
        rpc_code
        if rpc_code is not None
        else (_UNAUTHENTICATED if status == 401 else _INVALID_REQUEST)
    )
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": code,
                "message": exc.message,
                "data": {**exc.to_dict(), **getattr(exc, "rpc_data", {})},
            },
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
