"""``graphsvc neo4j start|stop|status``: the managed local Neo4j.

``status`` exits 0 when it runs and 3 when it does not (docs/cli.md).
"""

from __future__ import annotations

import argparse
from typing import Any

from graphsvc.cli.exit_codes import EXIT_OK
from graphsvc.cli.output import command, emit, progress
from graphsvc.settings import Settings

__all__ = ["EXIT_NOT_RUNNING", "register"]

EXIT_NOT_RUNNING = 3


def register(sub: Any) -> None:
    """Add ``neo4j`` to the ``graphsvc`` sub-parser set."""
    neo = sub.add_parser("neo4j", help="the managed local Neo4j")
    neo.add_argument("action", choices=["start", "stop", "status"])
    neo.add_argument("--name", default="serve", help="instance name (default: serve)")
    neo.add_argument("--json", action="store_true")
    neo.set_defaults(handler=_run)


@command
def _run(args: argparse.Namespace, settings: Settings) -> int:
    from graphsvc.localdb import LocalNeo4j

    local = LocalNeo4j(settings, name=args.name, progress=progress)
    if args.action == "start":
        inst = local.start()
        emit(
            args,
            {"running": True, "uri": inst.uri, "pid": inst.pid, "version": inst.version},
            f"Neo4j {inst.version} running on {inst.uri} (pid {inst.pid}); "
            f"password in {local.home / 'password'}",
        )
        return EXIT_OK
    if args.action == "stop":
        stopped = local.stop()
        emit(args, {"stopped": stopped}, "stopped" if stopped else "not running")
        return EXIT_OK
    found = local.status()
    if found is None:
        emit(args, {"running": False}, "not running")
        return EXIT_NOT_RUNNING
    emit(
        args,
        {"running": True, "uri": found.uri, "pid": found.pid, "version": found.version},
        f"running: Neo4j {found.version} on {found.uri} (pid {found.pid})",
    )
    return EXIT_OK
