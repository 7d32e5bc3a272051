"""``graphsvc`` command line: thin commands over the service (SPEC API-4).

Every command prints human text by default and one JSON document with ``--json``.
Errors print ``{"error": CODE, "message": ..., "exitCode": N}`` with ``--json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphsvc.errors import GraphsvcError
from graphsvc.settings import Settings

if TYPE_CHECKING:
    from graphsvc.service import Service

__all__ = ["main"]

Handler = Callable[[argparse.Namespace, Settings], int]


def _emit(args: argparse.Namespace, payload: Any, text: str | None = None) -> None:
    if getattr(args, "json", False):
        print(json.dumps(payload, indent=2, sort_keys=True, default=str))
    else:
        print(text if text is not None else json.dumps(payload, indent=2, default=str))


def _progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------- neo4j
def _cmd_neo4j(args: argparse.Namespace, settings: Settings) -> int:
    from graphsvc.localdb import LocalNeo4j

    local = LocalNeo4j(settings, name=args.name, progress=_progress)
    if args.action == "start":
        inst = local.start()
        _emit(
            args,
            {"running": True, "uri": inst.uri, "pid": inst.pid, "version": inst.version},
            f"Neo4j {inst.version} running on {inst.uri} (pid {inst.pid}); "
            f"password in {local.home / 'password'}",
        )
        return 0
    if args.action == "stop":
        stopped = local.stop()
        _emit(args, {"stopped": stopped}, "stopped" if stopped else "not running")
        return 0
    found = local.status()
    if found is None:
        _emit(args, {"running": False}, "not running")
        return 3
    _emit(
        args,
        {"running": True, "uri": found.uri, "pid": found.pid, "version": found.version},
        f"running: Neo4j {found.version} on {found.uri} (pid {found.pid})",
    )
    return 0


# --------------------------------------------------------------------- serve
def _demo_auth_file(settings: Settings) -> Path:
    """An auth file for the demo subject, created once with a random token (0600)."""
    path = settings.state_dir / "demo-auth.json"
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


def _cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    import uvicorn

    from graphsvc.api.app import create_app
    from graphsvc.auth import AuthTable
    from graphsvc.localdb import LocalNeo4j
    from graphsvc.runtime import build_service

    settings = settings.with_(host=args.host or settings.host, port=args.port or settings.port)
    local = LocalNeo4j(settings, name="serve", progress=_progress)
    started_here = settings.managed_neo4j and local.status() is None
    service, runtime = build_service(settings, progress=_progress, die_with_parent=True)
    try:
        auth_path = settings.auth_file or str(_demo_auth_file(settings))
        auth = AuthTable.from_file(auth_path)
        if args.seed:
            from graphsvc.clicmd.seed import progress_bar
            from graphsvc.seed import load_seed

            report = load_seed(service, progress=progress_bar)
            _progress(f"graphsvc: demo corpora: {report['atoms']} atoms in subject 'demo'")
        if not settings.auth_file:
            _progress(f"graphsvc: API tokens for subject 'demo' are in {auth_path}")
        _progress(f"graphsvc: GraphQL on http://{settings.host}:{settings.port}/graphql")
        _progress(f"graphsvc: explorer on http://{settings.host}:{settings.port}/explore")
        from graphsvc.logging_setup import configure_logging

        configure_logging(settings.log_format, settings.log_level)
        # graphsvc writes its own access line (no query string, with the request id).
        with _registered_replica(service):
            uvicorn.run(
                create_app(service, auth),
                host=settings.host,
                port=settings.port,
                log_config=None,
                access_log=False,
            )
    finally:
        runtime.db.close()
        if started_here:
            local.stop()
    return 0


@contextmanager
def _registered_replica(service: Service) -> Iterator[None]:
    """Register this process as a replica of its database while it serves.

    Refuses (REPLICA_KEYS_MISMATCH) when a live replica has another MAC secret or
    signing key (ops/replicas.py); renews the lease on a daemon thread; gives it back
    on a clean stop.
    """
    from graphsvc.atomise.usecase import load_key_ring
    from graphsvc.ops.replicas import ReplicaLease

    lease = ReplicaLease(
        service.db,
        service.secret,
        load_key_ring(service.settings).active_key_id,
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
                _progress(f"graphsvc: replica lease not renewed: {exc.code}")

    thread = threading.Thread(target=renew, name="graphsvc-replica-lease", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)
        with contextlib.suppress(GraphsvcError):
            lease.release()


# --------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="graphsvc", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    neo = sub.add_parser("neo4j", help="the managed local Neo4j")
    neo.add_argument("action", choices=["start", "stop", "status"])
    neo.add_argument("--name", default="serve", help="instance name (default: serve)")
    neo.add_argument("--json", action="store_true")
    neo.set_defaults(handler=_cmd_neo4j)

    serve = sub.add_parser("serve", help="serve the GraphQL API")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--seed", action="store_true", help="load the demo corpus first")
    serve.set_defaults(handler=_cmd_serve)

    from graphsvc.commands import register

    register(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = Settings.from_env()
        handler: Handler = args.handler
        return handler(args, settings)
    except GraphsvcError as exc:
        code = getattr(exc, "exit_code", 1)
        if getattr(args, "json", False):
            print(json.dumps({"error": exc.code, "message": exc.message, "exitCode": code}))
        else:
            print(f"graphsvc: {exc.code}: {exc.message}", file=sys.stderr)
            tail = exc.details.get("logTail")
            if tail:
                print(tail, file=sys.stderr)
        return int(code)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
