"""Refuse oversized write batches before graphql-core coerces them (API-3, WR-7).

graphql-core turns every element of a ``[ChangeInput!]`` variable into a Python
object on the event loop; 100,000 links in a 3.6 MB request cost seconds of CPU
before the resolver (and ``validate_plan``) could say BUDGET_EXCEEDED. This
extension looks at the raw JSON of such variables first and counts only list
lengths, so an oversized batch is refused in microseconds with the same code.
``validate_plan`` still checks everything; this is only the cheap early gate.
"""

from __future__ import annotations

from collections.abc import Iterator

from graphql import (
    DocumentNode,
    GraphQLError,
    ListTypeNode,
    NamedTypeNode,
    NonNullTypeNode,
    OperationDefinitionNode,
    TypeNode,
)
from strawberry.extensions import SchemaExtension

from graphsvc.core.batch_sizes import check_batch_sizes
from graphsvc.core.write_plan import Limits
from graphsvc.errors import BudgetExceededError

__all__ = ["WriteBatchGate"]


class WriteBatchGate(SchemaExtension):
    """Checks the sizes of ``[ChangeInput]`` variables against ``limits``."""

    def __init__(self, *, limits: Limits) -> None:
        self.limits = limits

    def on_validate(self) -> Iterator[None]:
        ctx = self.execution_context
        document = ctx.graphql_document
        if document is not None and ctx.variables and ctx.pre_execution_errors is None:
            try:
                for name in _change_list_variables(document):
                    check_batch_sizes(ctx.variables.get(name), self.limits)
            except BudgetExceededError as exc:
                # Reported as a pre-execution error, strawberry skips validation
                # and execution and the error keeps its code (ErrorCodes).
                ctx.pre_execution_errors = [GraphQLError(exc.message, original_error=exc)]
        yield


def _change_list_variables(document: DocumentNode) -> list[str]:
    names = []
    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            for var in definition.variable_definitions or ():
                if _is_change_list(var.type):
                    names.append(var.variable.name.value)
    return names


def _is_change_list(node: TypeNode) -> bool:
    while isinstance(node, NonNullTypeNode):
        node = node.type
    if not isinstance(node, ListTypeNode):
        return False
    inner = node.type
    while isinstance(inner, NonNullTypeNode):
        inner = inner.type
    return isinstance(inner, NamedTypeNode) and inner.name.value == "ChangeInput"
