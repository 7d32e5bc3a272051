"""Data commands of the CLI (write, search, read, ...), registered on the main parser."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add the data commands to the ``graphsvc`` sub-parser set."""
    _ = (sub, argparse)
