"""``graphsvc serve [--host H] [--port P] [--seed] [--workers N]``: the GraphQL API.

The composition root builds the Service (the embedding model is loaded before the
first request); without ``GRAPHSVC_AUTH_FILE`` a demo auth file with one token per
actor kind is created (0600) and named on stderr. While it serves, the process holds
a replica lease on its database (ops/replicas.py), and runs background jobs
(atomise/worker.py): :func:`graphsvc.runtime.serving`.

``--workers N`` (``GRAPHSVC_SERVE_WORKERS``) serves from N processes on one port:
this process starts the managed Neo4j (if any), applies the schema and loads the
demo corpus when asked, then uvicorn's supervisor starts N workers
(:mod:`graphsvc.http.worker_app`), each a replica of its own with the same keys, as
the replicas of docs/operations.md ("More than one process").
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from graphsvc.cli.discovery import forget_serve, record_serve
from graphsvc.cli.exit_codes import EXIT_OK
from graphsvc.cli.output import command, progress
from graphsvc.errors import InvalidInputError
from graphsvc.settings import Settings

if TYPE_CHECKING:
    from graphsvc.runtime import Runtime

__all__ = ["demo_auth_path", "register"]


_DEADLINE_CLASS = {"httptools": "HttpToolsDeadline", "h11": "H11Deadline"}


def http_runtime(
    choice: str,
) -> tuple[Literal["uvloop", "asyncio"], Literal["httptools", "h11"]]:
    """uvicorn's event loop and HTTP/1.1 implementation for GRAPHSVC_HTTP_RUNTIME
    (``auto``: uvloop and httptools where both import)."""
    if choice == "auto":
        try:
            import httptools  # noqa: F401
            import uvloop  # noqa: F401
        except ImportError:
            choice = "asyncio"
        else:
            choice = "uvloop"
    return ("uvloop", "httptools") if choice == "uvloop" else ("asyncio", "h11")


def register(sub: Any) -> None:
    """Add ``serve`` to the ``graphsvc`` sub-parser set."""
    serve = sub.add_parser("serve", help="serve the GraphQL API")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--seed", action="store_true", help="load the demo corpus first")
    serve.add_argument("--workers", type=int, default=None, help="serving processes (default 1)")
    serve.set_defaults(handler=_run)


def demo_auth_path(settings: Settings) -> Path:
    """Where ``serve`` keeps the demo tokens when ``GRAPHSVC_AUTH_FILE`` is not set."""
    return settings.paths.state_dir / "demo-auth.json"


def _demo_auth_file(settings: Settings) -> Path:
    """An auth file for the demo subject, created once with a random token (0600)."""
    path = demo_auth_path(settings)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tokens = {
            secrets.token_urlsafe(24): {
                "subject": "demo",
                "policy": "default",
                "actor": {"kind": kind, "id": f"demo-{kind}"},
                "purge": kind == "human",
            }
            for kind in ("human", "agent", "input-adapter")
        }
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump({"tokens": tokens}, fh, indent=2)
    return path


@command
def _run(args: argparse.Namespace, settings: Settings) -> int:
    import uvicorn

    from graphsvc.http.app import create_app
    from graphsvc.http.read_deadline import deadline_protocol
    from graphsvc.keys.auth import AuthTable
    from graphsvc.localdb import LocalNeo4j
    from graphsvc.runtime import build_service, serving
    from graphsvc.telemetry.logging_setup import configure_logging

    settings = settings.with_(
        host=args.host or settings.http.host,
        port=args.port or settings.http.port,
        serve_workers=args.workers or settings.http.serve_workers,
    )
    if settings.http.serve_workers < 1:
        raise InvalidInputError("--workers must be at least 1")
    # First, before this process starts any thread (the driver's, the resolvers'): a
    # cap set later, in a process whose threads already made their arenas, is not
    # what glibc documents it for.
    from graphsvc.http.blas_threads import limit_blas_threads
    from graphsvc.http.gc_policy import limit_malloc_arenas

    limit_malloc_arenas(settings.http.malloc_arenas)
    limit_blas_threads(settings.http.blas_threads)
    local = LocalNeo4j(settings, name="serve", progress=progress)
    started_here = settings.neo4j.managed and local.status() is None
    one = settings.http.serve_workers == 1
    service, runtime = build_service(
        settings, progress=progress, die_with_parent=True, load_model=one or args.seed
    )
    try:
        auth_path = settings.paths.auth_file or str(_demo_auth_file(settings))
        auth = AuthTable.from_file(auth_path)
        if args.seed:
            from graphsvc.cli.seed import progress_bar
            from graphsvc.seed import load_seed

            report = load_seed(service, progress=progress_bar)
            progress(f"graphsvc: demo corpora: {report['atoms']} atoms in subject 'demo'")
        if not settings.paths.auth_file:
            progress(f"graphsvc: API tokens for subject 'demo' are in {auth_path}")
        progress(f"graphsvc: GraphQL on http://{settings.http.host}:{settings.http.port}/graphql")
        progress(f"graphsvc: explorer on http://{settings.http.host}:{settings.http.port}/explore")
        progress(
            f"graphsvc: MCP (streamable HTTP) on http://{settings.http.host}:{settings.http.port}/mcp"
        )
        loop, http = http_runtime(settings.http.http_runtime)
        progress(f"graphsvc: HTTP on {loop} + {http}")
        _announce(settings, auth_path)
        configure_logging(settings.http.log_format, settings.http.log_level)
        if one:
            # graphsvc writes its own access line (no query string, with the request id).
            with serving(service, progress=progress):
                uvicorn.run(
                    create_app(service, auth),
                    host=settings.http.host,
                    port=settings.http.port,
                    log_config=None,
                    access_log=False,
                    loop=loop,
                    # uvicorn's protocol with a deadline per request head and body.
                    http=deadline_protocol(
                        http,
                        settings.http.read_head_timeout_s,
                        settings.http.read_body_timeout_s,
                    ),
                    timeout_keep_alive=settings.http.keep_alive_s,
                )
        else:
            _serve_workers(settings, runtime, auth_path, (loop, http))
    finally:
        forget_serve(settings)
        runtime.close()
        if started_here:
            local.stop()
    return EXIT_OK


def _announce(settings: Settings, auth_path: str) -> None:
    """Record this server in the state dir (the CLI there uses it by itself) and print
    the line that points another shell at it."""
    host = settings.http.host
    if host in {"0.0.0.0", "::", ""}:  # listening everywhere: this machine reaches it here
        host = "127.0.0.1"
    url = f"http://{host}:{settings.http.port}"
    try:
        record_serve(settings, url)
    except OSError as exc:
        progress(f"graphsvc: the CLI will not find this server by itself: {exc}")
    else:
        progress("graphsvc: graphsvc search/read/inspect in this state dir use this server")
    progress(
        "graphsvc: to point another shell at it: "
        f"export GRAPHSVC_SERVER_URL={url} GRAPHSVC_AUTH_FILE={shlex.quote(auth_path)}"
    )


def _serve_workers(
    settings: Settings,
    runtime: Runtime,
    auth_path: str,
    loop_and_http: tuple[Literal["uvloop", "asyncio"], Literal["httptools", "h11"]],
) -> None:
    """Serve from ``settings.http.serve_workers`` processes (uvicorn's supervisor).

    The workers read their settings from the environment (spawned, not forked: the
    model and the driver's threads do not survive a fork), so this process hands
    them the database it connected to and the auth file it chose.
    """
    import uvicorn

    if runtime.managed is not None:
        m = runtime.managed
        settings = settings.with_(neo4j_uri=m.uri, neo4j_user=m.user, neo4j_password=m.password)
    settings = settings.with_(auth_file=auth_path)
    settings.export("neo4j_uri", "neo4j_user", "neo4j_password", "auth_file", "state_dir")
    progress(f"graphsvc: serving from {settings.http.serve_workers} worker processes")
    uvicorn.run(
        app="graphsvc.http.worker_app:app",
        factory=True,
        host=settings.http.host,
        port=settings.http.port,
        workers=settings.http.serve_workers,
        log_config=None,
        access_log=False,
        loop=loop_and_http[0],
        # Each worker imports the protocol; it reads its deadlines from GRAPHSVC_*.
        http=f"graphsvc.http.read_deadline:{_DEADLINE_CLASS[loop_and_http[1]]}",
        timeout_keep_alive=settings.http.keep_alive_s,
    )
