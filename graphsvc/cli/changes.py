"""``graphsvc changes --since T [--until T] [--json]``: a subject's change feed.

Prints the subject's write operations in commit order (docs/time-travel.md), one
line each (sequence, time, kind, actor, what it created, revised, retired or
archived), or with ``--json`` one document ``{changes: [...]}``. It pages through
the feed with :meth:`graphsvc.service.Service.changes` until the window ends.
Exits 0.
"""

from __future__ import annotations

import argparse
from typing import Any

from graphsvc.cli.common import add_binding_args, binding_from_args, connected_service, instant
from graphsvc.cli.output import command, emit
from graphsvc.core.instants import with_utc_z
from graphsvc.settings import Settings

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "changes",
        help="a subject's write operations in commit order (the change feed)",
        description="List the write operations of a subject committed at or after "
        "--since (and before --until) in commit order. See docs/time-travel.md.",
    )
    add_binding_args(p)
    p.add_argument("--since", type=instant, required=True, help="ISO-8601 instant")
    p.add_argument("--until", type=instant, help="ISO-8601 instant (exclusive)")
    p.set_defaults(handler=_run)


@command
def _run(args: argparse.Namespace, settings: Settings) -> int:
    binding = binding_from_args(args)
    found: list[dict[str, Any]] = []
    with connected_service(settings) as service:
        after = None
        while True:
            page = service.changes(
                binding, since=args.since, until=args.until, after=after, first=100
            )
            found.extend(with_utc_z(r.to_json()) for r in page.records)
            if not page.has_next or not page.records:
                break
            after = page.records[-1].seq
    lines = []
    for c in found:
        what = " ".join(
            f"{k} {','.join(str(x['atomId']) + '@' + str(x['rev']) for x in c[k])}"
            for k in ("created", "revised", "retired", "archived")
            if c[k]
        )
        if c["kind"] == "purge":
            what = f"purged {c['purged']} atom(s)"
        actor = c["actor"]["kind"] + ":" + c["actor"]["id"] if c["actor"] else "-"
        lines.append(f"{c['sequence']:>6}  {c['committedAt']}  {c['kind']:<7} {actor}  {what}")
    emit(args, {"changes": found}, "\n".join(lines) or "no changes")
    return 0
