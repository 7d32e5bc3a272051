"""``graphsvc purge ATOM_ID --subject S [--json]`` (SPEC §6, API-4).

The CLI is a local operator: its binding has the purge right (actor kind
``human`` by default; ``--actor-kind agent`` is refused like any agent). Running
the command again for the same atom resumes an unfinished purge (LNK-6). Purge
never embeds, so the embedding model is never loaded (the root's lazy embedder).
"""

from __future__ import annotations

import argparse
from typing import Any

from graphsvc.cli.common import add_binding_args, binding_from_args, connected_service
from graphsvc.cli.output import command, emit
from graphsvc.settings import Settings

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add ``purge`` to the ``graphsvc`` sub-parser set."""
    p: argparse.ArgumentParser = sub.add_parser(
        "purge",
        help="erase an atom and everything that depends on it (operator)",
        description="Erase an atom, every revision of it and its dependency closure; "
        "run it again to resume an unfinished purge.",
    )
    p.add_argument("atom_id", metavar="ATOM_ID")
    add_binding_args(p)
    p.set_defaults(handler=_cmd_purge)


@command
def _cmd_purge(args: argparse.Namespace, settings: Settings) -> int:
    binding = binding_from_args(args, may_purge=True)
    with connected_service(settings) as service:
        outcome = service.purge(binding, args.atom_id)
    how = "resumed and finished" if outcome.resumed else "finished"
    emit(
        args,
        outcome.to_json(),
        f"purge of {outcome.atom_id} {how}: {len(outcome.purged)} atom(s), "
        f"{outcome.revisions} revision(s), {outcome.inputs} input record(s) erased; "
        "their bytes stay in Neo4j's files until `graphsvc compact` (docs/erasure.md)",
    )
    return 0
