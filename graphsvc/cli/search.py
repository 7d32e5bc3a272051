"""``graphsvc search QUERY --subject S``: ranked atoms with scores (SPEC §5, API-4).

Human output prints one line per hit, ``score  atomId@rev  first 80 characters``,
and, when there are more pages, the cursor on stderr. ``--json`` prints the whole
search result (hits with atom, score and scoreBreakdown, diagnostics, cursor) as
one JSON document.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from graphsvc.cli.common import add_binding_args, request_from_args
from graphsvc.cli.output import command, emit
from graphsvc.cli.remote import SEARCH_OPERATION, add_server_arg, run_operation
from graphsvc.core.requests import SearchRequest
from graphsvc.settings import Settings

__all__ = ["register"]

_PREVIEW = 80


def register(sub: Any) -> None:
    """Add ``search`` to the ``graphsvc`` sub-parser set."""
    p = sub.add_parser("search", help="ranked atoms with score and breakdown")
    p.add_argument("query", help="what to search for")
    add_binding_args(p)
    p.add_argument("--depth", type=int, default=None, help="retrieval depth (default 2)")
    p.add_argument("--limit", type=int, default=None, help="hits per page (default 10)")
    p.add_argument("--include-archived", action="store_true", help="show archived parents")
    p.add_argument("--cursor", default=None, help="the cursor of a previous page")
    add_server_arg(p)
    p.set_defaults(handler=_run)


@command
def _run(args: argparse.Namespace, settings: Settings) -> int:
    """Run one search and print it.

    Raises:
        GraphsvcError: whatever the search raises (INVALID_INPUT, CURSOR_EXPIRED, ...);
            ``graphsvc.cli.main`` turns it into an exit code.
    """
    request = request_from_args(SearchRequest, args)
    payload = run_operation(SEARCH_OPERATION, request, args, settings)
    if not args.json and not payload["hits"]:
        print("no hits", file=sys.stderr)
    if not args.json and payload["cursor"]:
        print(f"more: --cursor {payload['cursor']}", file=sys.stderr)
    emit(args, payload, "\n".join(_line(h) for h in payload["hits"]))
    return 0


def _line(hit: dict[str, Any]) -> str:
    atom = hit["atom"]
    preview = " ".join(atom["text"].split())[:_PREVIEW]  # one line per hit
    return f"{hit['score']:.4f}  {atom['atomId']}@{atom['rev']}  {preview}"
