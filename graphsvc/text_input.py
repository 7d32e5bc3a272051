"""Checks on caller text that every edge makes before anything runs.

A lone surrogate (U+D800–U+DFFF not in a pair) is not a Unicode scalar value: it
cannot be encoded as UTF-8, so the Neo4j driver, tiktoken and the embedder would
fail on it deep inside an operation. JSON can carry one (``"\\ud800"``) and Python's
``json`` module decodes it, so the edges refuse it up front as INVALID_INPUT with the
path of the offending value.
"""

from __future__ import annotations

import re
from typing import Any

from graphsvc.errors import InvalidInputError

__all__ = ["reject_lone_surrogates"]

# In a Python str a valid pair is already one code point above U+FFFF, so any code
# point in this range is unpaired.
_SURROGATE = re.compile("[\ud800-\udfff]")
# Nesting deeper than this is refused by the edges' limits long before it is walked.
_MAX_DEPTH = 64


def reject_lone_surrogates(value: Any, path: str = "") -> None:
    """Raise if any string (or object key) in a JSON-like ``value`` holds a lone surrogate.

    Raises:
        InvalidInputError: names the path of the first such string.
    """
    _walk(value, path, 0)


def _walk(value: Any, path: str, depth: int) -> None:
    if isinstance(value, str):
        if _SURROGATE.search(value):
            where = path or "value"
            raise InvalidInputError(
                f"{where}: text holds a lone surrogate (not a Unicode scalar value)",
                details={"path": where},
            )
        return
    if depth > _MAX_DEPTH:
        raise InvalidInputError(f"{path or 'value'}: nested too deeply")
    if isinstance(value, dict):
        for key, item in value.items():
            # A bad key is named by its parent: the message must not quote it.
            _walk(key, f"{path or 'value'} (an object key)", depth + 1)
            _walk(item, f"{path}.{key}" if path else str(key), depth + 1)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _walk(item, f"{path}.{i}" if path else str(i), depth + 1)
