"""``graphsvc seed``: load the demo corpus (idempotent)."""

from __future__ import annotations

import argparse
from typing import Any

from graphsvc.clicmd.common import connected_service, emit
from graphsvc.settings import Settings

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser("seed", help="load the demo corpus in seed/ (subject 'demo')")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace, settings: Settings) -> int:
    from graphsvc.seed import load_demo_corpus

    with connected_service(settings) as service:
        report = load_demo_corpus(service)
    emit(
        args,
        report,
        f"demo corpus: {report['atoms']} atoms in subject {report['subject']!r}"
        + (" (already loaded)" if report["repeated"] else ""),
    )
    return 0
