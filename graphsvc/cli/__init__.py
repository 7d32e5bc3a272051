"""``graphsvc`` command line: thin commands over the service (SPEC API-4).

One module per command family, each with ``register(sub)``
(:mod:`graphsvc.cli.commands` lists them); every command prints human text by
default and one JSON document with ``--json``, progress on stderr, errors once in
one format (:mod:`graphsvc.cli.output`) with the exit code of one table
(:mod:`graphsvc.cli.exit_codes`; docs/cli.md).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from graphsvc.cli.exit_codes import EXIT_INTERRUPTED
from graphsvc.cli.output import Handler, print_error
from graphsvc.errors import GraphsvcError
from graphsvc.settings import Settings

__all__ = ["build_parser", "main"]

# The commands that may answer through a running `graphsvc serve` (docs/cli.md, "A
# running server"): `graphsvc search ...` registers only its own module, whose top-level
# imports are light, so the HTTP path imports neither the other commands nor the
# store, the tokenizer, NumPy or SciPy (each command imports those when it connects).
_ALONE = {
    "search": "graphsvc.cli.search",
    "read": "graphsvc.cli.read",
    "inspect": "graphsvc.cli.inspect",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``graphsvc`` parser with every command registered, or only ``only`` (one of
    the commands of ``_ALONE``)."""
    p = argparse.ArgumentParser(
        prog="graphsvc",
        description="graphsvc: the memory graph service on Neo4j. Every command prints "
        "text, or one JSON document with --json; progress goes to stderr. Exit codes: "
        "docs/cli.md.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    if only is not None:
        importlib.import_module(_ALONE[only]).register(sub)
    else:
        from graphsvc.cli.commands import register

        register(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit code (argparse exits 2 on a usage error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    first = argv[0] if argv else ""
    parser = build_parser(first if first in _ALONE else None)
    args = parser.parse_args(argv)
    try:
        settings = Settings.from_env()
        handler: Handler = args.handler
        return handler(args, settings)
    except GraphsvcError as exc:  # raised outside a command (e.g. a bad GRAPHSVC_* value)
        return print_error(args, exc)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
