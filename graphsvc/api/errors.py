"""Copy a GraphsvcError's stable code into GraphQL ``extensions.code``.

Anything that is not a GraphsvcError is an internal error: its message is replaced
so no stack detail or stored text leaks, and it is logged.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from graphql import GraphQLError
from strawberry.extensions import SchemaExtension

from graphsvc.errors import GraphsvcError

__all__ = ["ErrorCodes"]

log = logging.getLogger("graphsvc.api")


class ErrorCodes(SchemaExtension):
    """Schema extension that sets ``extensions.code`` on every error."""

    def on_operation(self) -> Iterator[None]:
        yield
        result = self.execution_context.result
        if result is None or not result.errors:
            return
        result.errors = [_coded(e) for e in result.errors]


def _coded(error: GraphQLError) -> GraphQLError:
    original = error.original_error
    ext = dict(error.extensions or {})
    if isinstance(original, GraphsvcError):
        ext["code"] = original.code
        if original.details:
            ext["details"] = original.details
        return GraphQLError(
            original.message,
            error.nodes,
            error.source,
            error.positions,
            error.path,
            original,
            ext,
        )
    if original is None or isinstance(original, GraphQLError):
        # Parse/validation errors from graphql-core: the document itself is bad.
        # Variables that do not coerce to their declared input types arrive
        # wrapped around the GraphQLError that describes them: a bad request too.
        ext.setdefault("code", "INVALID_INPUT")
        return GraphQLError(
            error.message, error.nodes, error.source, error.positions, error.path, None, ext
        )
    log.error("internal error", exc_info=original)
    ext["code"] = "INTERNAL"
    return GraphQLError(
        "internal error", error.nodes, error.source, error.positions, error.path, None, ext
    )
