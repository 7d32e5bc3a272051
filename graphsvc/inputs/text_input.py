"""Checks on a caller's JSON that an edge makes before anything runs.

A lone surrogate (U+D800–U+DFFF not in a pair) is not a Unicode scalar value: it
cannot be encoded as UTF-8, so the Neo4j driver, tiktoken and the embedder would
fail on it deep inside an operation. JSON can carry one (``"\\ud800"``) and Python's
``json`` module decodes it, so an edge refuses it up front as INVALID_INPUT, with
the path of the offending value, as ``/graphql``'s front door does
(:mod:`graphsvc.http.front_door`); nesting deeper than the configured
``max_json_depth`` is refused the same way, and so is an integer outside the signed
64-bit range Neo4j stores (:mod:`graphsvc.core.input_bounds`): both protocols' input
passes here, so neither reaches the driver with one. The walk is iterative, linear in the
size of the value.
"""

from __future__ import annotations

from typing import Any

from graphsvc.core.input_bounds import is_wide_int
from graphsvc.errors import GraphsvcError, InvalidInputError

__all__ = ["check_json_values"]


def check_json_values(
    data: Any,
    max_depth: int,
    path: str = "",
    *,
    too_deep: type[GraphsvcError] = InvalidInputError,
) -> None:
    """Every string (object keys too) of a JSON-like ``data`` well-formed Unicode,
    every integer within 64 bits (what Neo4j stores), nothing nested deeper than
    ``max_depth``.

    Raises:
        InvalidInputError: a lone surrogate (the message names its path, never the
            text), or an integer outside the signed 64-bit range.
        GraphsvcError: nesting deeper than ``max_depth``, as ``too_deep`` (the front
            door of ``/graphql`` answers a too-deep body 400 BAD_REQUEST).
    """
    stack: list[tuple[Any, int, str]] = [(data, 0, path)]
    while stack:
        value, depth, where = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidInputError(
                    f"{where or 'the value'} is not well-formed Unicode (a lone surrogate)",
                    details={"path": where},
                ) from None
            continue
        if is_wide_int(value):
            raise InvalidInputError(
                f"{where or 'the value'} is outside the 64-bit integer range",
                details={"path": where},
            )
        if not isinstance(value, dict | list):
            continue
        if depth >= max_depth:
            raise too_deep(
                f"{where or 'the value'} is nested deeper than {max_depth}",
                details={"maxDepth": max_depth},
            )
        if isinstance(value, dict):
            for key, item in value.items():
                # A bad key is named by its parent: the message must not quote it.
                stack.append((key, depth + 1, f"{where or 'the value'} (a key)"))
                if isinstance(key, str) and _well_formed(key):
                    stack.append((item, depth + 1, f"{where}.{key[:64]}" if where else key[:64]))
        else:
            stack.extend((item, depth + 1, f"{where}[{i}]") for i, item in enumerate(value))


def _well_formed(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
