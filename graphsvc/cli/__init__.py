"""``graphsvc`` command line: thin commands over the service (SPEC API-4).

One module per command family, each with ``register(sub)``
(:mod:`graphsvc.cli.commands` lists them); every command prints human text by
default and one JSON document with ``--json``, progress on stderr, errors once in
one format (:mod:`graphsvc.cli.output`) with the exit code of one table
(:mod:`graphsvc.cli.exit_codes`; docs/cli.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from graphsvc.cli.exit_codes import EXIT_INTERRUPTED
from graphsvc.cli.output import Handler, print_error
from graphsvc.errors import GraphsvcError
from graphsvc.settings import Settings

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The ``graphsvc`` parser with every command registered."""
    from graphsvc.cli.commands import register

    p = argparse.ArgumentParser(
        prog="graphsvc",
        description="graphsvc: the memory graph service on Neo4j. Every command prints "
        "text, or one JSON document with --json; progress goes to stderr. Exit codes: "
        "docs/cli.md.",
    )
    register(p.add_subparsers(dest="command", required=True))
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit code (argparse exits 2 on a usage error)."""
    parser = build_parser()
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
