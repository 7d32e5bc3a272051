"""``graphsvc compact`` and ``graphsvc erasure status`` (operators; docs/erasure.md).

Exit codes of ``erasure status``: 0 every finished purge is erased from disk,
3 purges await ``graphsvc compact``, 4 one of them is past its due time
(``GRAPHSVC_ERASURE_MAX_DELAY_S``); with ``--scan``, 5 when a needle was found.
A cron line that keeps the bound: ``graphsvc erasure status || graphsvc compact``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from graphsvc.cli.output import command, emit, progress
from graphsvc.core.instants import with_utc_z
from graphsvc.errors import InvalidInputError
from graphsvc.settings import Settings

__all__ = ["EXIT_ERASED", "EXIT_FOUND", "EXIT_OVERDUE", "EXIT_PENDING", "register"]

EXIT_ERASED, EXIT_PENDING, EXIT_OVERDUE, EXIT_FOUND = 0, 3, 4, 5


def register(sub: Any) -> None:
    c = sub.add_parser(
        "compact",
        help="rebuild the managed Neo4j's store from live records so purged bytes leave "
        "the disk (Neo4j is stopped meanwhile)",
    )
    c.add_argument("--batch", type=int, default=2000, help="records per copy transaction")
    c.add_argument(
        "--index-timeout", type=float, default=3600.0, help="seconds to wait for the indexes"
    )
    c.add_argument(
        "--if-pending",
        action="store_true",
        help="do nothing unless a finished purge awaits erasure",
    )
    c.add_argument("--json", action="store_true", help="print one JSON document")
    c.set_defaults(handler=_compact)

    e = sub.add_parser("erasure", help="whether purged bytes are gone from disk")
    actions = e.add_subparsers(dest="action", required=True)
    st = actions.add_parser("status", help="purges awaiting `graphsvc compact`, and since when")
    st.add_argument(
        "--scan",
        metavar="FILE",
        help="also search every file of the managed Neo4j for the strings in FILE (one per "
        "line; raw, UTF-16 and Lucene terms); a hit names "
        "the string by its number (non-blank lines from 0), never by its text",
    )
    st.add_argument("--path", help="the folder to scan (default: the managed Neo4j's folder)")
    st.add_argument("--json", action="store_true", help="print one JSON document")
    st.set_defaults(handler=_status)


@command
def _compact(args: argparse.Namespace, settings: Settings) -> int:
    from graphsvc.admin import compact

    if args.batch < 1 or not args.index_timeout > 0:
        raise InvalidInputError("--batch must be >= 1 and --index-timeout > 0")
    if args.if_pending:
        state = _state(settings)
        if state["erased"]:
            emit(args, {"compacted": False, **state}, "nothing to erase; store left as it is")
            return 0
    report = compact(
        settings, batch=args.batch, index_timeout_s=args.index_timeout, progress=progress
    )
    emit(
        args,
        {"compacted": True, **report.to_json()},
        f"store rebuilt: {report.nodes} nodes, {report.relationships} relationships; "
        f"{report.erased_purges} purge(s) erased from disk; "
        f"{report.bytes_before} -> {report.bytes_after} bytes; "
        f"Neo4j down {report.downtime_seconds:.1f} s",
    )
    return 0


def _state(settings: Settings) -> dict[str, Any]:
    """The erasure status as the command prints it (``--scan`` adds to it)."""
    from graphsvc.cli.common import connected_admin

    with connected_admin(settings) as admin:
        return admin.erasure_status().to_json()


@command
def _status(args: argparse.Namespace, settings: Settings) -> int:
    state = with_utc_z(_state(settings))
    code = EXIT_ERASED if state["erased"] else EXIT_OVERDUE if state["overdue"] else EXIT_PENDING
    if args.scan:
        scan = _scan(args, settings)
        state["scan"] = scan
        if scan["hits"]:
            code = EXIT_FOUND
    if state["erased"]:
        text = "erased: no finished purge awaits `graphsvc compact`"
    else:
        text = (
            f"pending: {state['pendingPurges']} purge(s) since {state['oldestPendingAt']} "
            f"still on disk until the next `graphsvc compact` (due by {state['dueBy']}"
            f"{', OVERDUE' if state['overdue'] else ''})"
        )
    if args.scan:
        text += f"; scan: {len(state['scan']['hits'])} hit(s) in {state['scan']['files']} files"
    emit(args, state, text)
    return code


def _scan(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from graphsvc.localdb import LocalNeo4j
    from graphsvc.localdb.erasure_scan import scan

    lines = Path(args.scan).read_text(encoding="utf-8").splitlines()
    needles = [line.strip() for line in lines if line.strip()]
    local = LocalNeo4j(settings, name="serve", progress=progress)
    if args.path:
        root = Path(args.path)
    elif settings.neo4j.managed:
        root = local.home
    else:
        raise InvalidInputError("--scan of a Neo4j you run needs --path (its folder)")
    if not root.is_dir():
        raise InvalidInputError(f"no folder {root}")
    report = scan(root, needles, lucene_lib=local.lib_dir())
    return report.to_json()
