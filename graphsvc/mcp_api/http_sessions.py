"""MCP session ids on ``/mcp`` (SPEC §17, MCP-1): which session a request belongs to.

The SDK keeps a stateful session in the memory of one process, which a second
replica behind a balancer does not have; graphsvc keeps its sessions in Neo4j
instead (:mod:`graphsvc.store.mcp_sessions`) and runs the SDK's manager stateless.
:class:`SessionGate` decides, before the manager sees a request, following the
streamable-HTTP transport of the MCP specification (2025-06-18, "Session
Management"):

- ``POST`` of ``initialize`` without ``Mcp-Session-Id``: a new session; the answer
  carries its id in ``Mcp-Session-Id`` (a refused ``initialize`` closes it again);
- any other ``POST``: it must name a live session of the caller's binding: none is
  400 (BAD_REQUEST), an ended, expired or another binding's is 404 (NOT_FOUND; the
  client starts a new session); a ``tools/call`` is checked with a read, the one
  write that ends the call restarting the session's idle time
  (:meth:`graphsvc.mcp_api.session.Call.settle`), any other request restarts it here;
- ``DELETE`` with ``Mcp-Session-Id``: the session ends (its window is deleted);
- ``GET``: 405 (METHOD_NOT_ALLOWED, ``Allow: POST, DELETE``): graphsvc sends no
  server-initiated messages, so it offers no event stream;
- ``?profile=compact|full`` on the URL picks the tools ``tools/list`` shows to this
  host (default ``GRAPHSVC_MCP_PROFILE``); another value is 400;
- a request of the 2026-07-28 era (which has no sessions): ``-32022``
  (unsupported protocol version) naming the handshake versions, so that the SDK's
  clients fall back to ``initialize``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from starlette.types import Message, Receive, Scope, Send

from graphsvc.core.binding import Binding
from graphsvc.errors import BadRequestError, MethodNotAllowedError, NotFoundError
from graphsvc.service import Service

__all__ = ["Admitted", "SessionGate", "UnsupportedEraError"]

_SESSION_HEADER = b"mcp-session-id"
_VERSION_HEADER = b"mcp-protocol-version"
_UNSUPPORTED_PROTOCOL_VERSION = -32022
# Session ids graphsvc issues are 32 hex digits; a longer header is nobody's.
_MAX_ID = 128


class UnsupportedEraError(BadRequestError):
    """A request of a protocol era without sessions (answered -32022)."""

    rpc_code = _UNSUPPORTED_PROTOCOL_VERSION

    def __init__(self, requested: str) -> None:
        super().__init__(
            "this server speaks MCP with sessions: initialize with a handshake version",
        )
        self.rpc_data = {"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": requested}


@dataclass
class Admitted:
    """A request let through: its session, its body again, and what to do after."""

    session_id: str | None
    receive: Receive
    opened: bool = False
    # The session was ended (DELETE): the request is answered here, not by the SDK.
    ended: bool = False
    # The tool profile the URL asks for (None: the configured one).
    profile: str | None = None
    status: list[int] = field(default_factory=list)
    close: Callable[[str], Awaitable[None]] | None = None

    def wrap(self, send: Send) -> Send:
        """``send`` that puts the new session's id on the answer of its ``initialize``."""
        if not self.opened or self.session_id is None:
            return send
        sid = self.session_id.encode()

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.status.append(int(message["status"]))
                if message["status"] < 400:
                    headers = [*message.get("headers", []), (_SESSION_HEADER, sid)]
                    message = {**message, "headers": headers}
            await send(message)

        return sending

    async def finish(self, binding: Binding) -> None:
        """A session opened by an ``initialize`` that was refused is closed again."""
        refused = not self.status or self.status[0] >= 400
        if self.opened and refused and self.session_id and self.close is not None:
            await self.close(self.session_id)


class SessionGate:
    """The session rules of ``/mcp`` (see the module docstring)."""

    def __init__(self, service: Service) -> None:
        self._service = service
        self._limit = service.settings.http.max_request_bytes

    async def admit(self, scope: Scope, receive: Receive, binding: Binding) -> Admitted:
        """The session of this request, or the refusal that answers it.

        Raises:
            MethodNotAllowedError: a GET (no event stream is offered) or another method.
            UnsupportedEraError: a request of the 2026-07-28 era.
            BadRequestError: a POST other than ``initialize`` without a session id.
            NotFoundError: a session id that is not a live session of ``binding``.
        """
        headers = dict(scope.get("headers", []))
        method = scope.get("method", "GET")
        version = headers.get(_VERSION_HEADER, b"").decode("latin-1")
        session_id = headers.get(_SESSION_HEADER, b"").decode("latin-1") or None
        if method not in ("POST", "DELETE"):
            raise MethodNotAllowedError(
                "/mcp offers no event stream (GET): graphsvc sends nothing unasked; "
                "POST JSON-RPC requests, DELETE to end a session"
            )
        if version in MODERN_PROTOCOL_VERSIONS:
            raise UnsupportedEraError(version)
        profile = _profile(scope)
        if session_id is not None and method == "DELETE":
            await self._live(binding, session_id, self._service.mcp_session_touch)
            await asyncio.to_thread(self._service.mcp_session_close, binding, session_id)
            return Admitted(session_id, receive, ended=True)
        if method == "DELETE":
            raise BadRequestError("DELETE /mcp names the session to end (Mcp-Session-Id)")
        body, replay = await _buffered(receive, self._limit)
        if session_id is not None:
            tool_call = _method(body) == "tools/call"
            check = self._service.mcp_session_live if tool_call else self._service.mcp_session_touch
            await self._live(binding, session_id, check)
            return Admitted(session_id, replay, profile=profile)
        if len(body) > self._limit:
            # The manager refuses a body over the limit (413) without reading it.
            return Admitted(None, replay)
        if _method(body) != "initialize":
            raise BadRequestError(
                "missing Mcp-Session-Id: open a session with initialize, then send its id"
            )
        new_id = await asyncio.to_thread(self._service.mcp_session_open, binding)

        async def close(sid: str) -> None:
            await asyncio.to_thread(self._service.mcp_session_close, binding, sid)

        return Admitted(new_id, replay, opened=True, close=close, profile=profile)

    async def _live(
        self, binding: Binding, session_id: str, check: Callable[[Binding, str], bool]
    ) -> None:
        live = len(session_id) <= _MAX_ID and await asyncio.to_thread(check, binding, session_id)
        if not live:
            raise NotFoundError("no such MCP session (ended or expired): initialize a new one")


def _profile(scope: Scope) -> str | None:
    """The ``profile`` query parameter of the URL, if any.

    Raises:
        BadRequestError: a value other than compact or full.
    """
    query = scope.get("query_string", b"").decode("latin-1")
    values = parse_qs(query).get("profile")
    if not values:
        return None
    value = str(values[-1])
    if value not in ("compact", "full"):
        raise BadRequestError("profile: compact or full")
    return value


def _method(body: bytes) -> object:
    """The JSON-RPC method of a one-message body (None when it is not one)."""
    try:
        message = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return message.get("method") if isinstance(message, dict) else None


async def _buffered(receive: Receive, limit: int) -> tuple[bytes, Receive]:
    """The request body (up to ``limit`` + 1 bytes) and a ``receive`` that hands the
    same messages to the manager again (which answers 413 past the limit)."""
    held: list[Message] = []
    size = 0
    while True:
        message = await receive()
        held.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        if not message.get("more_body", False) or size > limit:
            break
    body = b"".join(m.get("body", b"") for m in held if m["type"] == "http.request")

    async def replay() -> Message:
        if held:
            return held.pop(0)
        return await receive()

    return body, replay
