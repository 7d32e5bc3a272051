"""MCP over stdio: the SDK's transport, plus an answer to every line it cannot read.

The SDK's stdio transport hands a line that is not a JSON-RPC message to the
server loop as an exception, which drops it: the client never hears back and may
wait for ever. JSON-RPC 2.0 asks for an error response instead, so
:func:`serve_stdio` answers such a line itself: ``-32700`` (parse error, id null)
for text that is not JSON (a lone surrogate escape included), ``-32600`` (invalid
request) for JSON that is not a JSON-RPC message, with the request's id when it
has a usable one; ``data`` carries graphsvc's ``{code: INVALID_INPUT, message}``.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

__all__ = ["serve_stdio"]

_PARSE_ERROR = -32700
_INVALID_REQUEST = -32600


async def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` on this process's stdin/stdout until stdin closes."""
    async with stdio_server() as (read, write), anyio.create_task_group() as tg:
        send_inner, read_inner = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def pump() -> None:
            async with send_inner:
                async for item in read:
                    if isinstance(item, Exception):
                        await write.send(SessionMessage(_error_for(item)))
                    else:
                        await send_inner.send(item)

        tg.start_soon(pump)
        await server.run(read_inner, write, server.create_initialization_options())
        tg.cancel_scope.cancel()


def _error_for(exc: Exception) -> types.JSONRPCError:
    """The JSON-RPC error answering a line the transport could not read."""
    if isinstance(exc, ValidationError) and all(
        e["type"] == "json_invalid" for e in exc.errors(include_input=False)
    ):
        code, message, request_id = _PARSE_ERROR, "Parse error: not JSON", None
    else:
        code, message = _INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message"
        request_id = _request_id(exc)
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=types.ErrorData(
            code=code, message=message, data={"code": "INVALID_INPUT", "message": message}
        ),
    )


def _request_id(exc: Exception) -> str | int | None:
    """The ``id`` of the JSON object the message was, when it is a usable one."""
    if not isinstance(exc, ValidationError):
        return None
    for err in exc.errors():
        value = err.get("input")
        if isinstance(value, dict):
            rid = value.get("id")
            if isinstance(rid, int) and not isinstance(rid, bool):
                return rid
            if isinstance(rid, str) and len(rid) <= 256:
                return rid
    return None
