"""``graphsvc index rebuild [--fulltext]``: rebuild a search index in one pass (operators)."""

from __future__ import annotations

import argparse
from typing import Any, Literal

from graphsvc.cli.output import command, emit, progress
from graphsvc.settings import Settings

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser("index", help="maintain the search indexes")
    actions = p.add_subparsers(dest="action", required=True)
    rebuild = actions.add_parser(
        "rebuild",
        help="re-populate the vector index in one pass (after a bulk load; vector "
        "searches use the exact scan meanwhile), or with --fulltext the fulltext index "
        "(with graphsvc's analyzer; searches rank semantically meanwhile)",
    )
    rebuild.add_argument(
        "--fulltext",
        action="store_true",
        help="rebuild the fulltext index instead (after an analyzer change)",
    )
    rebuild.add_argument(
        "--entities",
        action="store_true",
        help="(re-)derive the entity index of every current head with the configured "
        "extractor instead (resumable: a killed run goes on where it stopped)",
    )
    rebuild.add_argument(
        "--subject", help="with --entities: only this subject's heads (default: all)"
    )
    rebuild.add_argument(
        "--batch", type=int, default=500, help="with --entities: heads per transaction (500)"
    )
    rebuild.add_argument(
        "--timeout", type=float, default=3600.0, help="seconds to wait for the index (3600)"
    )
    rebuild.add_argument(
        "--grace",
        type=float,
        default=2.0,
        help="seconds between switching searches to the exact scan and dropping the index (2)",
    )
    rebuild.add_argument("--json", action="store_true", help="print one JSON document")
    rebuild.set_defaults(handler=_rebuild)


@command
def _rebuild(args: argparse.Namespace, settings: Settings) -> int:
    from graphsvc.admin import check_durations
    from graphsvc.cli.common import connected_admin

    if args.entities:
        return _rebuild_entities(args, settings)
    check_durations(args.grace, args.timeout)  # before a Neo4j is started for nothing
    kind: Literal["vector", "fulltext"] = "fulltext" if args.fulltext else "vector"
    # No schema step and no models: applying the schema waits for every index to
    # be online, which a population left running by an earlier attempt is not.
    with connected_admin(settings) as admin:
        report = admin.rebuild_index(
            kind, grace_s=args.grace, timeout_s=args.timeout, progress=progress
        )
    analyzer = f" (analyzer {report.analyzer})" if report.fulltext else ""
    emit(
        args,
        report.to_json(),
        f"{kind} index {report.index} rebuilt{analyzer}: {report.entries} entries, "
        f"online after {report.seconds:.1f} s",
    )
    return 0


def _rebuild_entities(args: argparse.Namespace, settings: Settings) -> int:
    from graphsvc.cli.common import connected_admin
    from graphsvc.entities import extractor_for
    from graphsvc.errors import InvalidInputError

    extractor = extractor_for(settings.ranking.entities)
    if extractor is None:
        raise InvalidInputError("the entity index is off (GRAPHSVC_ENTITIES=off): nothing to build")
    with connected_admin(settings) as admin:
        report = admin.rebuild_entities(
            extractor, subject=args.subject, batch=args.batch, progress=progress
        )
    state = "built" if report.finished else f"unfinished ({report.pending} heads left)"
    emit(
        args,
        report.to_json(),
        f"entity index {state} by {report.extractor}: {report.indexed} heads indexed "
        f"in {report.seconds:.1f} s",
    )
    return 0 if report.finished or args.subject else 1
