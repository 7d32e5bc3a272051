"""``graphsvc write FILE|- --subject S``: commit a batch from JSON (SPEC §2, API-4).

The input is a JSON list of changes, or ``{"changes": [...]}``, in the shape of
SPEC §2 (``op`` in either case; a link target may be a bare ``{atomId, rev}``).
It is read and validated before any connection is made, so a malformed or
oversized batch fails fast (INVALID_INPUT, BUDGET_EXCEEDED, TOKEN_INVALID for an
agent change without a token) without starting Neo4j. Human output prints one line per change,
``id  atomId@rev  state``; ``--json`` prints the whole WriteOutcome.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from graphsvc.cli.common import add_binding_args, binding_from_args, connected_service
from graphsvc.cli.output import command, emit
from graphsvc.core.write_plan import validate_plan
from graphsvc.errors import InvalidInputError
from graphsvc.inputs.models import parse_changes
from graphsvc.service import Service
from graphsvc.settings import Settings

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add ``write`` to the ``graphsvc`` sub-parser set."""
    p = sub.add_parser("write", help="commit a batch of changes atomically (JSON file or -)")
    p.add_argument("file", help='JSON list of changes or {"changes": [...]}; "-" reads stdin')
    add_binding_args(p)
    p.add_argument("--idempotency-key", default=None, help="replay-safe key (IDEM-1)")
    p.set_defaults(handler=_run)


def _read(source: str) -> Any:
    """The JSON document of ``source`` (a path, or ``-`` for stdin).

    Raises:
        InvalidInputError: the file cannot be read or is not JSON.
    """
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"cannot read {source}: {exc}") from exc
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InvalidInputError(f"{source} is not JSON: {exc}") from exc


@command
def _run(args: argparse.Namespace, settings: Settings) -> int:
    """Parse the batch, connect, write, print the outcome.

    Raises:
        GraphsvcError: INVALID_INPUT before connecting; anything ``write`` raises
            after (CAS_CONFLICT, TOKEN_INVALID, ...). ``graphsvc.cli.main`` turns
            it into an exit code.
    """
    changes = parse_changes(_read(args.file))
    binding = binding_from_args(args)
    # Everything checkable without the database fails before Neo4j is started.
    validate_plan(changes, binding, Service.write_limits(settings))
    with connected_service(settings) as service:
        outcome = service.write(binding, changes, args.idempotency_key)
    payload = outcome.to_json()
    lines = [
        f"{cid}  {view['atomId']}@{view['rev']}  {view['state']}"
        for cid, view in payload["changes"].items()
    ]
    head = f"operation {payload['operationId']}" + (" (replayed)" if payload["repeated"] else "")
    emit(args, payload, "\n".join([head, *lines]))
    return 0
