"""The MCP server of graphsvc: tools and resources over one Service, for one transport.

:func:`build_server` makes the SDK's low-level :class:`mcp.server.Server` with
handlers for ``tools/list``, ``tools/call``, ``resources/list``,
``resources/templates/list`` and ``resources/read``. Who is calling comes from a
:data:`GrantOf` function of the transport: stdio binds the whole process to the
token it was started with (:mod:`graphsvc.cli.mcp_cmd`), HTTP takes each request's
Bearer token (:mod:`graphsvc.mcp_api.http`). Either way the token's Grant gives the
Binding and the capabilities, as in GraphQL (:mod:`graphsvc.api.context`):

- ``tools/list`` shows the tools the token may call, no others (an agent token
  never sees an operator tool);
- ``tools/call`` of a tool the token may not call answers PERMISSION_DENIED;
- every error of an operation is a tool result with ``isError: true``, its text
  ``CODE: message`` and its ``structuredContent`` ``{code, message, details?}``
  (graphsvc's stable codes); anything else is INTERNAL with no detail, logged with
  its traceback; an unknown tool is a JSON-RPC error (invalid params).

Each call runs in a worker thread (Service calls block on Neo4j and the model)
inside a request scope, so it has the same deadline as a GraphQL request
(``request_timeout_s``, enforced in Neo4j as the transaction timeout).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import mcp_types as types
from graphql import GraphQLSchema
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from graphsvc.core.instants import with_utc_z
from graphsvc.errors import BudgetExceededError, GraphsvcError, InvalidInputError
from graphsvc.keys.auth import Grant
from graphsvc.mcp_api.resources import TEMPLATES, read_resource
from graphsvc.mcp_api.session import Call, SessionOf
from graphsvc.mcp_api.tools import Tool, build_tools, listed
from graphsvc.service import Service
from graphsvc.telemetry.request_scope import RequestScope, entered, new_request_id, scope

__all__ = ["GrantOf", "ScopeOf", "build_server", "error_result"]

log = logging.getLogger("graphsvc.mcp")

GrantOf = Callable[[ServerRequestContext[Any, Any]], Grant]
"""The caller's Grant for a request (raises UnauthenticatedError when there is none)."""

ScopeOf = Callable[[ServerRequestContext[Any, Any]], RequestScope | None]
"""The request scope the transport opened for a request, if any."""

# JSON-RPC error codes: invalid params (JSON-RPC 2.0), resource not found (MCP),
# and the server-defined one graphsvc answers every other coded error with.
_INVALID_PARAMS = -32602
_RESOURCE_NOT_FOUND = -32002
_SERVER_ERROR = -32000

_INSTRUCTIONS = (
    "graphsvc is a versioned, cited memory. `search` or `read` before answering from "
    "memory; `remember` what is worth keeping (what this session was shown is recorded "
    "as its source). Errors carry a stable code (CAS_CONFLICT: look at the atom again "
    "and retry)."
)


def _version() -> str:
    try:
        return version("graphsvc")
    except PackageNotFoundError:  # pragma: no cover - run from a tree without install
        return "0"


def build_server(
    service: Service,
    grant_of: GrantOf,
    *,
    operations: GraphQLSchema,
    scope_of: ScopeOf | None = None,
    session_of: SessionOf | None = None,
    profile: str | None = None,
    profile_of: Callable[[ServerRequestContext[Any, Any]], str | None] | None = None,
    max_call_bytes: int | None = None,
) -> Server[Any]:
    """The MCP server for ``service``.

    Args:
        service: the facade every tool calls.
        grant_of: the caller of a request (the transport's authentication).
        operations: the GraphQL schema the tools' arguments are read from (the host
            builds it: the two protocols do not import each other).
        scope_of: the request scope the transport opened (HTTP); without one, each
            call opens its own with the configured request timeout (stdio).
        session_of: the MCP session of a request (SPEC §17): what its calls show the
            model is kept there, and its changes carry a token issued from it.
        profile: ``compact`` or ``full`` (default: ``GRAPHSVC_MCP_PROFILE``): which
            tools ``tools/list`` shows.
        profile_of: the profile a request asks for (HTTP: ``/mcp?profile=full``);
            None keeps ``profile``.
        max_call_bytes: the most bytes one call's arguments may take as JSON
            (default: the settings' ``max_request_bytes``, the HTTP body limit).
    """
    settings = service.settings
    limit = settings.http.max_request_bytes if max_call_bytes is None else max_call_bytes
    handlers = _Handlers(service, grant_of, scope_of, limit, operations)
    handlers.session_of = session_of or (lambda _ctx: None)
    handlers.profile = profile or settings.client.mcp_profile
    if profile_of is not None:
        handlers.profile_of = profile_of
    tools = handlers.tools
    return Server(
        "graphsvc",
        version=_version(),
        title="graphsvc memory",
        instructions=_INSTRUCTIONS,
        get_tool_input_schema=lambda name: tools[name].input_schema() if name in tools else None,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        on_list_resources=handlers.list_resources,
        on_list_resource_templates=handlers.list_templates,
        on_read_resource=handlers.read,
    )


class _Handlers:
    """The server's request handlers, sharing one Service, its tools and the transport's
    way of naming the caller."""

    def __init__(
        self,
        service: Service,
        grant_of: GrantOf,
        scope_of: ScopeOf | None,
        limit: int,
        operations: GraphQLSchema,
    ) -> None:
        self.service = service
        self.grant_of = grant_of
        self.scope_of = scope_of
        self.limit = limit
        self.tools = build_tools(operations, service)
        self.session_of: SessionOf = lambda _ctx: None
        self.profile = "compact"
        self.profile_of: Callable[[ServerRequestContext[Any, Any]], str | None] = lambda _ctx: None

    @contextmanager
    def call_scope(self, ctx: ServerRequestContext[Any, Any]) -> Iterator[RequestScope]:
        sc = self.scope_of(ctx) if self.scope_of is not None else None
        if sc is not None:
            with entered(sc):
                yield sc
        else:
            with scope(new_request_id(), self.service.settings.http.request_timeout_s) as own:
                yield own

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        grant = self.grant_of(ctx)
        profile = self.profile_of(ctx) or self.profile
        return types.ListToolsResult(
            tools=[_tool(t) for t in self.tools.values() if listed(t, profile, grant.can)]
        )

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = self.tools.get(params.name)
        if tool is None:
            # The name is not echoed: it is the caller's text.
            raise MCPError(
                code=_INVALID_PARAMS,
                message="unknown tool; tools/list names the tools this token may call",
                data={"code": "INVALID_INPUT"},
            )
        raw = params.arguments or {}
        with self.call_scope(ctx) as sc:
            sc.operation = f"mcp.{tool.name}"
            started = time.perf_counter()
            try:
                grant = self.grant_of(ctx)
                binding = grant.require(tool.capability)
                session_id = self.session_of(ctx)

                def work() -> dict[str, Any]:
                    _check_size(raw, self.limit)
                    call = Call(self.service, binding, raw, session_id)
                    result = tool.run(call)
                    call.settle()
                    return result

                result = await asyncio.to_thread(work)
            except GraphsvcError as exc:
                sc.codes.append(exc.code)
                log.info("client error", extra={"code": exc.code, "tool": tool.name})
                return error_result(exc)
            except Exception:
                sc.codes.append("INTERNAL")
                log.exception("internal error", extra={"code": "INTERNAL", "tool": tool.name})
                return error_result(GraphsvcError("internal error"))
            log.debug(
                "tool call",
                extra={"tool": tool.name, "ms": round((time.perf_counter() - started) * 1e3, 2)},
            )
        return _result(tool, result)

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        self.grant_of(ctx)
        # Atoms are found with search/read; the templates say how to name one.
        return types.ListResourcesResult(resources=[])

    async def list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        self.grant_of(ctx)
        return types.ListResourceTemplatesResult(resource_templates=list(TEMPLATES))

    async def read(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        with self.call_scope(ctx) as sc:
            sc.operation = "mcp.resource"
            try:
                binding = self.grant_of(ctx).require("read")
                return await asyncio.to_thread(read_resource, self.service, binding, params.uri)
            except GraphsvcError as exc:
                sc.codes.append(exc.code)
                log.info("client error", extra={"code": exc.code, "tool": "resources/read"})
                code = {"NOT_FOUND": _RESOURCE_NOT_FOUND, "INVALID_INPUT": _INVALID_PARAMS}
                raise MCPError(
                    code=code.get(exc.code, _SERVER_ERROR), message=exc.message, data=exc.to_dict()
                ) from exc


def _tool(t: Tool) -> types.Tool:
    d = t.definition
    return types.Tool(
        name=t.name,
        description=t.description,
        input_schema=t.input_schema(),
        annotations=types.ToolAnnotations(
            read_only_hint=d.read_only_hint,
            destructive_hint=d.destructive,
            idempotent_hint=d.idempotent_hint,
            open_world_hint=False,
        ),
    )


def _result(tool: Tool, answer: dict[str, Any]) -> types.CallToolResult:
    content: list[types.ContentBlock]
    # Instants leave in the Z form, as on every surface (docs/agents.md, "Vocabulary").
    result = with_utc_z(answer)
    if tool.name == "read":
        # The model-facing text on its own, then what the host keeps (refs, manifest id).
        rest = {k: v for k, v in result.items() if k != "text"}
        content = [_text(result["text"]), _text(json.dumps(rest, ensure_ascii=False))]
    else:
        content = [_text(json.dumps(result, ensure_ascii=False))]
    return types.CallToolResult(content=content, structured_content=result)


def error_result(exc: GraphsvcError) -> types.CallToolResult:
    """A tool error carrying graphsvc's code: text ``CODE: message``, structured
    ``{code, message, details?}``."""
    return types.CallToolResult(
        content=[_text(f"{exc.code}: {exc.message}")],
        structured_content=exc.to_dict(),
        is_error=True,
    )


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def _check_size(raw: Any, limit: int) -> None:
    """Refuse a call whose arguments are larger than ``limit`` bytes as JSON.

    Over HTTP the body limit refused a larger request already (413); over stdio
    nothing else bounds one message.

    Raises:
        InvalidInputError: the arguments are not a JSON object.
        BudgetExceededError: they are too large.
    """
    if not isinstance(raw, dict):
        raise InvalidInputError("arguments must be a JSON object")
    size = len(json.dumps(raw, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if size > limit:
        raise BudgetExceededError(
            f"the call's arguments take {size} bytes; the limit is {limit}",
            details={"limit": "request bytes", "max": limit},
        )
