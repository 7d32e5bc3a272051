"""``graphsvc read QUERY --subject S``: a token-budgeted read (SPEC §8, API-4).

Human output prints the model-facing ``text`` on stdout and a one-line selection
summary on stderr, so ``graphsvc read ... > memory.json`` keeps only the text.
``--json`` prints the whole read result (text, items, selection, manifest,
diagnostics, cursor) as one JSON document.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from graphsvc.cli.common import add_binding_args, request_from_args
from graphsvc.cli.output import command, emit
from graphsvc.cli.remote import READ_OPERATION, add_server_arg, run_operation
from graphsvc.core.requests import ReadRequest
from graphsvc.settings import Settings

__all__ = ["register"]


def _non_negative(raw: str) -> int:
    """An argparse type: a whole number >= 0 (rejected before any model loads)."""
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def register(sub: Any) -> None:
    """Add ``read`` to the ``graphsvc`` sub-parser set."""
    p = sub.add_parser("read", help="a token-budgeted, dependency-complete read")
    p.add_argument("query", help="what to read about")
    add_binding_args(p)
    p.add_argument(
        "--budget",
        type=_non_negative,
        default=None,
        help="memoryTokenBudget (default: GRAPHSVC_READ_BUDGET, 4096)",
    )
    p.add_argument("--depth", type=_non_negative, default=None, help="retrieval depth (default 2)")
    p.add_argument("--limit", type=_non_negative, default=None, help="roots per page (default 24)")
    p.add_argument("--include-archived", action="store_true", help="show archived parents")
    p.add_argument("--cursor", default=None, help="the cursor of a previous page")
    add_server_arg(p)
    p.set_defaults(handler=_run)


@command
def _run(args: argparse.Namespace, settings: Settings) -> int:
    request = request_from_args(
        ReadRequest,
        args,
        memory_token_budget=settings.read.read_budget if args.budget is None else args.budget,
    )
    payload = run_operation(READ_OPERATION, request, args, settings)
    if not args.json:
        print(_summary(payload), file=sys.stderr)
    emit(args, payload, payload["text"])
    return 0


def _summary(payload: dict[str, Any]) -> str:
    sel = payload["selection"]
    items = payload["items"]
    presented = sum(1 for i in items if not i["blocked"])
    blocked = sum(1 for i in items if i["blocked"])
    left_out = len(payload["diagnostics"]["selection"].get("leftOut", []))
    line = (
        f"read: {presented} presented, {blocked} blocked, {left_out} left out; "
        f"{sel['tokens']}/{sel['budget']} tokens; "
        f"baselineComplete={str(sel['baselineComplete']).lower()}; "
        f"manifest {payload['manifest']['id']}"
    )
    if payload["cursor"]:
        line += f"; more: --cursor {payload['cursor']}"
    return line + _budget_hint(payload)


def _budget_hint(payload: dict[str, Any]) -> str:
    """When roots were left out for the budget: the budget and the smallest that fits.

    The best-ranked left-out root comes first in ``leftOut``; ``minBudgetFor`` holds the
    smallest budget whose packing would take its whole required closure.
    """
    selection = payload["diagnostics"]["selection"]
    need = selection.get("minBudgetFor") or {}
    fits = [need[key] for key in selection.get("leftOut", []) if key in need]
    if not fits:
        return ""
    budget = payload["selection"]["budget"]
    what = "nothing fits" if not payload["items"] else "less than asked fits"
    return (
        f"\nread: {what} in --budget {budget}: the best-ranked root left out needs "
        f"--budget {fits[0]} (the smallest for any left-out root: {min(fits)})"
    )
