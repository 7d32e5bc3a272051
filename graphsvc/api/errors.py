"""Copy a GraphsvcError's stable code into GraphQL ``extensions.code``.

Anything that is not a GraphsvcError is an internal error: its message is replaced
so no stack detail or stored text leaks, and it is logged with its traceback.
A client error (any coded one) is logged as one line: its code and field path, never
its message (a message may quote the caller's input).

The extension also records, for the HTTP layer and ``/metrics``, which operation ran
(its root field names) and the codes it answered, and puts the request id into every
error's extensions (``requestId``, as in the ``X-Request-Id`` header).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from graphql import FieldNode, GraphQLError, OperationDefinitionNode, OperationType
from strawberry.extensions import SchemaExtension

from graphsvc.core.input_bounds import MESSAGE_CHARS, excerpt
from graphsvc.errors import GraphsvcError
from graphsvc.telemetry.request_scope import current

__all__ = ["ErrorCodes", "operation_label"]

log = logging.getLogger("graphsvc.api")


class ErrorCodes(SchemaExtension):
    """Schema extension that sets ``extensions.code`` on every error."""

    def on_operation(self) -> Iterator[None]:
        yield
        sc = current()
        if sc is not None:
            sc.operation = operation_label(self.execution_context)
        result = self.execution_context.result
        if result is None or not result.errors:
            return
        result.errors = [_coded(e) for e in result.errors]
        for error in result.errors:
            code = str((error.extensions or {}).get("code", "INTERNAL"))
            if sc is not None:
                sc.codes.append(code)
                error.extensions = {**(error.extensions or {}), "requestId": sc.request_id}
            if code != "INTERNAL":
                log.info(
                    "client error",
                    extra={"code": code, "path": [str(p) for p in error.path or []]},
                )


def operation_label(execution_context: Any) -> str:
    """The operation's root field names (``search``, ``read+search``), a bounded label.

    Introspection is ``introspection``; a document that did not parse, or more than
    three distinct root fields, is ``unknown`` / ``multi``.
    """
    document = getattr(execution_context, "graphql_document", None)
    if document is None:
        return "unknown"
    wanted = getattr(execution_context, "operation_name", None)
    gql_schema = getattr(getattr(execution_context, "schema", None), "_schema", None)
    names: set[str] = set()
    for definition in document.definitions:
        if not isinstance(definition, OperationDefinitionNode):
            continue
        if wanted and (definition.name is None or definition.name.value != wanted):
            continue
        root = _root_type(gql_schema, definition.operation)
        for sel in definition.selection_set.selections:
            if not isinstance(sel, FieldNode):
                names.add("fragment")
            elif sel.name.value.startswith("__"):
                names.add("introspection")
            elif root is not None and sel.name.value in root.fields:
                names.add(sel.name.value)
            else:
                # Not a field of the schema: never a label of its own (unbounded).
                names.add("unknown")
        break
    if not names:
        return "unknown"
    if len(names) > 3:
        return "multi"
    return "+".join(sorted(names))


def _root_type(gql_schema: Any, operation: OperationType) -> Any:
    if gql_schema is None:
        return None
    if operation == OperationType.QUERY:
        return gql_schema.query_type
    if operation == OperationType.MUTATION:
        return gql_schema.mutation_type
    return gql_schema.subscription_type


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
        # graphql-core quotes a bad literal whole ("Int cannot represent …: "<3 MB>"").
        return GraphQLError(
            excerpt(error.message, MESSAGE_CHARS),
            error.nodes,
            error.source,
            error.positions,
            error.path,
            None,
            ext,
        )
    log.error(
        "internal error",
        exc_info=original,
        extra={"code": "INTERNAL", "path": [str(p) for p in error.path or []]},
    )
    ext["code"] = "INTERNAL"
    return GraphQLError(
        "internal error", error.nodes, error.source, error.positions, error.path, None, ext
    )
