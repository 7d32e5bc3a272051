"""``graphsvc seed``: load the demo corpora (idempotent), with a progress bar on stderr."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from graphsvc.cli.common import connected_service
from graphsvc.cli.output import command, emit
from graphsvc.settings import Settings

__all__ = ["progress_bar", "register"]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "seed",
        help="load the demo corpora in seed/ (subject 'demo', plus 'demo-partner')",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_run)


def progress_bar(done: int, total: int, label: str) -> None:
    """``seed [#######-------] 120/343 batch 3`` on stderr (redrawn in place on a tty)."""
    width = 30
    filled = width * done // max(total, 1)
    line = f"seed [{'#' * filled}{'-' * (width - filled)}] {done}/{total} {label}"
    if sys.stderr.isatty():
        end = "\n" if done >= total else ""
        print(f"\r{line:<72}", end=end, file=sys.stderr, flush=True)
    else:
        print(line, file=sys.stderr, flush=True)


@command
def _run(args: argparse.Namespace, settings: Settings) -> int:
    from graphsvc.seed import load_seed

    with connected_service(settings) as service:
        report = load_seed(service, progress=progress_bar)
    team = report["team"]
    again = " (already loaded)" if report["repeated"] else ""
    emit(
        args,
        report,
        f"demo corpora: {report['atoms']} atoms in subject {report['subject']!r} "
        f"({team['revisions']} revisions, {team['retired']} retired, a note atomised into "
        f"{team['atomisedInto']}), {team['secondSubject']['atoms']} in "
        f"{team['secondSubject']['subject']!r}{again}",
    )
    return 0
