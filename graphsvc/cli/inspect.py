"""``graphsvc inspect ATOM_ID``: one revision and its one-hop neighbours (SPEC §7, API-4)."""

from __future__ import annotations

import argparse
from typing import Any

from graphsvc.cli.common import add_binding_args, request_from_args
from graphsvc.cli.output import command, emit
from graphsvc.cli.remote import INSPECT_OPERATION, add_server_arg, run_operation
from graphsvc.core.requests import InspectRequest
from graphsvc.settings import Settings

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add ``inspect`` to the ``graphsvc`` sub-parser set."""
    p = sub.add_parser("inspect", help="show one atom revision and its one-hop neighbours")
    p.add_argument("atom_id", metavar="ATOM_ID")
    add_binding_args(p)
    p.add_argument("--rev", type=int, help="revision (default: the head)")
    # Either case: GraphQL's enums spell OBSERVED / INCOMING, the SPEC's JSON observed.
    p.add_argument("--version", type=str.lower, choices=["observed", "logical"], default="observed")
    p.add_argument(
        "--direction", type=str.lower, choices=["incoming", "outgoing", "both"], default="both"
    )
    p.add_argument(
        "--role", dest="roles", action="append", metavar="R", help="only links of role R"
    )
    p.add_argument("--limit", type=int, help="neighbours per page (0: the root only)")
    p.add_argument("--cursor", help="the previous page's cursor")
    p.add_argument("--range-start", type=int, help="first body byte (UTF-8)")
    p.add_argument("--range-end", type=int, help="byte after the last one")
    add_server_arg(p)
    p.set_defaults(handler=_run)


@command
def _run(args: argparse.Namespace, settings: Settings) -> int:
    request = request_from_args(InspectRequest, args)
    payload = run_operation(INSPECT_OPERATION, request, args, settings)
    emit(args, payload, _text(payload))
    return 0


_PREVIEW = 100


def _preview(text: str) -> str:
    """The text on one line, cut at a word boundary near ``_PREVIEW`` characters."""
    flat = " ".join(text.split())
    if len(flat) <= _PREVIEW:
        return flat
    cut = flat[:_PREVIEW].rsplit(" ", 1)[0]
    return cut + " …"


def _text(doc: dict[str, Any]) -> str:
    atom = doc["atom"]
    elig = doc["readEligibility"]
    eligible = "yes" if elig["eligible"] else "no (" + ", ".join(elig["reasons"]) + ")"
    lines = [
        f"{atom['atomId']}@{atom['rev']} [{atom['state']}{', head' if atom['head'] else ''}]"
        f" read-eligible: {eligible}{', stale' if doc['stale'] else ''}",
        atom["text"],
    ]
    for n in doc["neighbors"]:
        nb = n["atom"]
        vias = ", ".join(
            f"{'->' if v['direction'] == 'outgoing' else '<-'} {v['role']} ({v['at']}"
            f"{', required' if v['required'] else ''})"
            for v in n["via"]
        )
        lines.append(f"  {nb['atomId']}@{nb['rev']} [{nb['state']}] {vias}")
        # The neighbour's text on its own line: an id alone says nothing to a reader.
        lines.append(f"      {_preview(nb['text'])}")
    gone = doc["diagnostics"]["acquisition"]["unavailableCount"]
    if gone:
        lines.append(f"  ({gone} unavailable link(s))")
    if doc["cursor"]:
        lines.append(f"next page: --cursor {doc['cursor']}")
    return "\n".join(lines)
