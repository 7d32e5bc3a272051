"""``graphsvc serve [--host H] [--port P] [--seed]``: the GraphQL API (SPEC API-7).

The composition root builds the Service (the embedding model is loaded before the
first request); without ``GRAPHSVC_AUTH_FILE`` a demo auth file with one token per
actor kind is created (0600) and named on stderr. While it serves, the process holds
a replica lease on its database (ops/replicas.py), and runs background jobs
(atomise/worker.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphsvc.cli.exit_codes import EXIT_OK
from graphsvc.cli.output import command, progress
from graphsvc.errors import GraphsvcError
from graphsvc.settings import Settings

if TYPE_CHECKING:
    from graphsvc.service import Service

__all__ = ["background_jobs", "demo_auth_path", "register", "registered_replica"]


def register(sub: Any) -> None:
    """Add ``serve`` to the ``graphsvc`` sub-parser set."""
    serve = sub.add_parser("serve", help="serve the GraphQL API")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--seed", action="store_true", help="load the demo corpus first")
    serve.set_defaults(handler=_run)


def demo_auth_path(settings: Settings) -> Path:
    """Where ``serve`` keeps the demo tokens when ``GRAPHSVC_AUTH_FILE`` is not set."""
    return settings.state_dir / "demo-auth.json"


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

    from graphsvc.api.app import create_app
    from graphsvc.auth import AuthTable
    from graphsvc.localdb import LocalNeo4j
    from graphsvc.logging_setup import configure_logging
    from graphsvc.runtime import build_service

    settings = settings.with_(host=args.host or settings.host, port=args.port or settings.port)
    local = LocalNeo4j(settings, name="serve", progress=progress)
    started_here = settings.managed_neo4j and local.status() is None
    service, runtime = build_service(
        settings, progress=progress, die_with_parent=True, load_model=True
    )
    try:
        auth_path = settings.auth_file or str(_demo_auth_file(settings))
        auth = AuthTable.from_file(auth_path)
        if args.seed:
            from graphsvc.cli.seed import progress_bar
            from graphsvc.seed import load_seed

            report = load_seed(service, progress=progress_bar)
            progress(f"graphsvc: demo corpora: {report['atoms']} atoms in subject 'demo'")
        if not settings.auth_file:
            progress(f"graphsvc: API tokens for subject 'demo' are in {auth_path}")
        progress(f"graphsvc: GraphQL on http://{settings.host}:{settings.port}/graphql")
        progress(f"graphsvc: explorer on http://{settings.host}:{settings.port}/explore")
        progress(f"graphsvc: MCP (streamable HTTP) on http://{settings.host}:{settings.port}/mcp")
        configure_logging(settings.log_format, settings.log_level)
        # graphsvc writes its own access line (no query string, with the request id).
        with registered_replica(service), background_jobs(service):
            uvicorn.run(
                create_app(service, auth),
                host=settings.host,
                port=settings.port,
                log_config=None,
                access_log=False,
            )
    finally:
        runtime.close()
        if started_here:
            local.stop()
    return EXIT_OK


@contextmanager
def background_jobs(service: Service) -> Iterator[None]:
    """Run this replica's share of the background jobs while it serves: its own, and
    those left by a process that died (at start, then every ``job_poll_s``)."""
    from graphsvc.atomise.worker import worker_for

    worker = worker_for(service)
    worker.start_polling(service.settings.job_poll_s)
    try:
        yield
    finally:
        worker.stop()


@contextmanager
def registered_replica(service: Service) -> Iterator[None]:
    """Register this process as a replica of its database while it serves.

    Refuses (REPLICA_KEYS_MISMATCH) when a live replica has another MAC secret or
    signing key (ops/replicas.py); renews the lease on a daemon thread; gives it back
    on a clean stop.
    """
    from graphsvc.ops.replicas import ReplicaLease

    lease = ReplicaLease(
        service.db,
        service.secret,
        service.signing_keys().active_key_id,
        service.clock,
        lease_s=service.settings.replica_lease_s,
    )
    lease.acquire()
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(lease.renew_every_s):
            try:
                lease.renew()
            except GraphsvcError as exc:  # Neo4j away: the next renewal re-registers
                progress(f"graphsvc: replica lease not renewed: {exc.code}")

    thread = threading.Thread(target=renew, name="graphsvc-replica-lease", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)
        with contextlib.suppress(GraphsvcError):
            lease.release()
