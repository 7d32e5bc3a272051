"""Data commands of the CLI, registered on the main parser from ``graphsvc/clicmd``.

Each family of commands lives in its own module with a ``register(sub)``
function; this module only lists them.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

__all__ = ["COMMAND_MODULES", "register"]

COMMAND_MODULES = (
    "write",
    "search",
    "read",
    "inspect",
    "purge",
    "atomise",
    "seed",
    "export",
)


def register(sub: Any) -> None:
    """Add the data commands to the ``graphsvc`` sub-parser set."""
    for name in COMMAND_MODULES:
        module_name = f"graphsvc.clicmd.{name}"
        if importlib.util.find_spec(module_name) is None:
            continue
        importlib.import_module(module_name).register(sub)
