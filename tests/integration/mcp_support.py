"""MCP clients for the tests: the SDK's own ``Client`` over stdio and streamable HTTP.

An :class:`McpSession` keeps one SDK client connected on an event loop of its own
(a thread), so synchronous tests can share it and many calls can be in flight at
once (:meth:`McpSession.submit`): ``graphsvc mcp`` as a subprocess through
:func:`stdio_session`, or ``/mcp`` of a served app through :func:`http_session`.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from graphsvc.settings import Settings

__all__ = [
    "McpSession",
    "http_session",
    "initialize_message",
    "stdio_env",
    "stdio_session",
    "write_auth_file",
]

T = TypeVar("T")


def write_auth_file(path: Path, tokens: dict[str, dict[str, Any]]) -> Path:
    """An auth file (SPEC API-2) with these token entries, 0600."""
    path.write_text(json.dumps({"tokens": tokens}), encoding="utf-8")
    path.chmod(0o600)
    return path


def stdio_env(settings: Settings, auth_file: Path, state_dir: Path) -> dict[str, str]:
    """The environment of a ``graphsvc mcp`` subprocess on the test session's Neo4j,
    MAC secret and signing key (as a replica of the in-process service)."""
    return {
        **os.environ,
        "GRAPHSVC_NEO4J_URI": settings.neo4j.uri,
        "GRAPHSVC_STATE_DIR": str(state_dir),
        "GRAPHSVC_SECRET_FILE": str(settings.paths.secret_file),
        "GRAPHSVC_KEY_FILE": str(settings.paths.key_file),
        "GRAPHSVC_AUTH_FILE": str(auth_file),
        "GRAPHSVC_LOG_LEVEL": "WARNING",
    }


class McpSession:
    """One connected SDK client on its own event loop thread."""

    def __init__(self, connect: Callable[[], Client], label: str) -> None:
        self.label = label
        self._loop = asyncio.new_event_loop()
        self._ready: Future[Client] = Future()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(
            target=self._loop.run_until_complete,
            args=(self._hold(connect),),
            name=f"mcp-{label}",
            daemon=True,
        )
        self._thread.start()
        self.client = self._ready.result(timeout=240)

    async def _hold(self, connect: Callable[[], Client]) -> None:
        self._stop = asyncio.Event()
        try:
            async with connect() as client:
                self._ready.set_result(client)
                await self._stop.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            else:
                raise

    def submit(self, fn: Callable[[Client], Awaitable[T]]) -> Future[T]:
        """Run ``fn(client)`` on the session's loop; many may run at once."""

        async def run() -> T:
            return await fn(self.client)

        return asyncio.run_coroutine_threadsafe(run(), self._loop)

    def run(self, fn: Callable[[Client], Awaitable[T]], timeout: float = 120) -> T:
        return self.submit(fn).result(timeout=timeout)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
        """``tools/call``; a tool error comes back as a result with ``is_error``."""
        return self.run(lambda c: c.call_tool(name, arguments))

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """``tools/call`` that must succeed: its structured content."""
        result = self.call(name, arguments)
        assert not result.is_error, (name, result.content)
        assert isinstance(result.structured_content, dict)
        return result.structured_content

    def error(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """``tools/call`` that must fail as a tool error: ``{code, message, details?}``."""
        result = self.call(name, arguments)
        assert result.is_error, (name, result.structured_content)
        assert isinstance(result.structured_content, dict)
        error = result.structured_content
        text = result.content[0]
        assert isinstance(text, types.TextContent)
        assert text.text.startswith(f"{error['code']}: ")
        return error

    def tools(self) -> dict[str, types.Tool]:
        listed = self.run(lambda c: c.list_tools())
        return {t.name: t for t in listed.tools}

    def close(self) -> None:
        loop, stop = self._loop, self._stop
        if stop is not None and loop.is_running():
            loop.call_soon_threadsafe(stop.set)
        self._thread.join(timeout=60)
        if not loop.is_running():
            loop.close()


def stdio_session(
    env: dict[str, str], token: str | None, label: str = "stdio", profile: str = "full"
) -> McpSession:
    """``graphsvc mcp --profile P`` as a subprocess, driven by the SDK's stdio client."""
    full = dict(env)
    full.pop("GRAPHSVC_MCP_TOKEN", None)
    if token is not None:
        full["GRAPHSVC_MCP_TOKEN"] = token
    args = ["-m", "graphsvc", "mcp", "--profile", profile]
    params = StdioServerParameters(command=sys.executable, args=args, env=full)
    return McpSession(lambda: Client(params, read_timeout_seconds=120), label)


def http_session(
    base_url: str, token: str | None, label: str = "http", profile: str = "full"
) -> McpSession:
    """``/mcp?profile=P`` of a served app, driven by the SDK's streamable HTTP client."""

    def connect() -> Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=120))
        return Client(
            streamable_http_client(f"{base_url}/mcp?profile={profile}", http_client=http),
            read_timeout_seconds=120,
        )

    return McpSession(connect, label)


def initialize_message(request_id: int) -> dict[str, Any]:
    """A raw ``initialize`` request of the 2025-06-18 handshake."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
