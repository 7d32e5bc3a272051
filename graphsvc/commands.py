"""Data commands of the CLI, registered on the main parser from ``graphsvc/clicmd``.

Each family of commands lives in its own module with a ``register(sub)``
function; this module only lists them, in the order ``graphsvc --help`` shows.
"""

from __future__ import annotations

from typing import Any

from graphsvc.clicmd import (
    atomise,
    erasure,
    export,
    import_cmd,
    index,
    inspect,
    purge,
    read,
    search,
    seed,
    write,
)

__all__ = ["register"]

_MODULES = (write, import_cmd, search, read, inspect, purge, atomise, seed, export, index, erasure)


def register(sub: Any) -> None:
    """Add the data commands to the ``graphsvc`` sub-parser set."""
    for module in _MODULES:
        module.register(sub)
