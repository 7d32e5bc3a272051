"""``graphsvc mcp [--token T]``: the MCP server over stdio, for agent hosts (docs/agents.md).

An agent host starts this command and speaks MCP on its stdin/stdout. The process
acts as one API token of the auth file (``GRAPHSVC_MCP_TOKEN``, or ``--token``):
its Binding (subject, policy, actor) and capabilities hold for every call, exactly
as for a GraphQL request with that Bearer token. A missing or unknown token, or no
auth file, is refused before anything starts (exit 8, ``UNAUTHENTICATED`` on
stderr); there is no default subject. Without ``GRAPHSVC_AUTH_FILE`` the tokens of
``serve``'s demo file are used when that file exists.

stdout carries only the protocol: progress and logs go to stderr. While it serves,
the process holds a replica lease and runs background jobs, as ``serve`` does.
"""

from __future__ import annotations

import argparse
import contextlib
from typing import TYPE_CHECKING, Any

from graphsvc.cli.exit_codes import EXIT_OK
from graphsvc.cli.output import command, progress
from graphsvc.errors import GraphsvcError, UnauthenticatedError
from graphsvc.settings import Settings

if TYPE_CHECKING:
    from graphsvc.keys.auth import Grant

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add ``mcp`` to the ``graphsvc`` sub-parser set."""
    p = sub.add_parser(
        "mcp",
        help="serve MCP over stdio for an agent host (one API token's binding)",
        description="Serve the Model Context Protocol on stdin/stdout. The token is "
        "GRAPHSVC_MCP_TOKEN (or --token; an environment variable stays out of the "
        "process list). MCP over HTTP is /mcp of `graphsvc serve`.",
    )
    p.add_argument("--token", help="the API token to act as (default: GRAPHSVC_MCP_TOKEN)")
    p.add_argument(
        "--profile",
        choices=("compact", "full"),
        help="the tools listed: compact (six) or full (default: GRAPHSVC_MCP_PROFILE)",
    )
    p.set_defaults(handler=_run)


def _grant(args: argparse.Namespace, settings: Settings) -> Grant:
    """The Grant of the configured token, checked before any database is touched.

    Raises:
        UnauthenticatedError: no token, no auth file, or an unknown token.
        InvalidInputError: the auth file is malformed.
    """
    from graphsvc.cli.serve import demo_auth_path
    from graphsvc.keys.auth import AuthTable

    token = (args.token or settings.client.mcp_token).strip()
    if not token:
        raise UnauthenticatedError("no API token: set GRAPHSVC_MCP_TOKEN (or pass --token)")
    path = settings.paths.auth_file or str(demo_auth_path(settings))
    if not settings.paths.auth_file and not demo_auth_path(settings).exists():
        raise UnauthenticatedError("no API tokens are configured (set GRAPHSVC_AUTH_FILE)")
    return AuthTable.from_file(path).grant_for(f"Bearer {token}")


@command
def _run(args: argparse.Namespace, settings: Settings) -> int:
    # A refusal answers before the heavy imports (the SDK, the schema, the model).
    grant = _grant(args, settings)
    b = grant.binding

    import anyio

    from graphsvc.api.schema import build_schema
    from graphsvc.localdb import LocalNeo4j
    from graphsvc.mcp_api.server import build_server
    from graphsvc.mcp_api.stdio import serve_stdio
    from graphsvc.runtime import build_service, serving
    from graphsvc.telemetry.logging_setup import configure_logging

    local = LocalNeo4j(settings, name="serve", progress=progress)
    started_here = settings.neo4j.managed and local.status() is None
    service, runtime = build_service(
        settings, progress=progress, die_with_parent=True, load_model=True
    )
    try:
        configure_logging(settings.http.log_format, settings.http.log_level)
        # The process is one MCP session (SPEC §17, MCP-1): opened now, its window
        # deleted when stdin closes.
        session_id = service.mcp_session_open(b)
        profile = args.profile or settings.client.mcp_profile
        server = build_server(
            service,
            lambda _ctx: grant,
            operations=build_schema(settings)._schema,
            session_of=lambda _ctx: session_id,
            profile=profile,
        )
        progress(
            f"graphsvc: MCP on stdio as subject {b.subject!r}, {b.actor_kind} {b.actor_id!r} "
            f"(may: {', '.join(sorted(grant.can))}; tools: {profile})"
        )
        try:
            with serving(service, progress=progress):
                anyio.run(serve_stdio, server)
        finally:
            with contextlib.suppress(GraphsvcError):
                # A database gone by now: the window expires on its own.
                service.mcp_session_close(b, session_id)
    finally:
        runtime.close()
        if started_here:
            local.stop()
    return EXIT_OK
