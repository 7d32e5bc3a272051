"""Every command of the CLI, registered on the main parser.

Each family of commands lives in its own module of :mod:`graphsvc.cli` with a
``register(sub)`` function; this module only lists them, in the order
``graphsvc --help`` shows.
"""

from __future__ import annotations

from typing import Any

from graphsvc.cli import (
    atomise,
    changes,
    erasure,
    export,
    import_cmd,
    index,
    inspect,
    jobs,
    mcp_cmd,
    neo4j_cmd,
    purge,
    read,
    reembed,
    search,
    seed,
    serve,
    write,
)

__all__ = ["register"]

_MODULES = (
    neo4j_cmd,
    serve,
    mcp_cmd,
    write,
    import_cmd,
    search,
    read,
    inspect,
    purge,
    atomise,
    seed,
    export,
    changes,
    index,
    reembed,
    jobs,
    erasure,
)


def register(sub: Any) -> None:
    """Add every command to the ``graphsvc`` sub-parser set."""
    for module in _MODULES:
        module.register(sub)
