"""Query cost limit (API-3): estimate an operation's cost before it runs.

The estimate walks the operation over the schema's types (fragments included)
and counts the objects the answer may hold: every selected field of an object
type costs 1 (scalar leaves are free; the token limit bounds them); the subtree
of a connection (a type named ``…Connection``) counts ``first`` times (its default
page size when ``first`` is not given; literal or variable), ``nodes(ids)`` once
per id, and any other list of objects ``LIST_ESTIMATE`` times. Fragments on
another type than the field's (the branches of a union or interface) are
alternatives: the most expensive one counts. An operation over
``max_query_cost`` is refused with QUERY_TOO_COMPLEX before any resolver runs;
the depth, alias and token limits of :mod:`graphsvc.api.schema` stay.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from graphql import (
    ExecutionResult,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValueNode,
    VariableNode,
    value_from_ast_untyped,
)
from strawberry.extensions import SchemaExtension

from graphsvc.errors import QueryTooComplexError

__all__ = ["LIST_ESTIMATE", "CostLimiter", "estimate_cost"]

LIST_ESTIMATE: Final = 10
# Fragments may not nest forever; a spread cycle is a validation error anyway.
_MAX_FRAGMENT_DEPTH: Final = 64


def _unwrap(t: Any) -> tuple[Any, bool]:
    is_list = False
    while isinstance(t, GraphQLNonNull | GraphQLList):
        if isinstance(t, GraphQLList):
            is_list = True
        t = t.of_type
    return t, is_list


def _arg(node: FieldNode, name: str, variables: Mapping[str, Any]) -> Any:
    for a in node.arguments or ():
        if a.name.value == name:
            value: ValueNode = a.value
            if isinstance(value, VariableNode):
                return variables.get(value.name.value)
            return value_from_ast_untyped(value, dict(variables))
    return None


class _Estimator:
    def __init__(
        self,
        schema: GraphQLSchema,
        fragments: dict[str, FragmentDefinitionNode],
        variables: Mapping[str, Any],
        default_first: int,
    ) -> None:
        self.schema = schema
        self.fragments = fragments
        self.variables = variables
        self.default_first = default_first

    def selections(
        self, parent: GraphQLNamedType | None, sel: SelectionSetNode | None, depth: int = 0
    ) -> int:
        if sel is None or depth > _MAX_FRAGMENT_DEPTH:
            return 0
        total = 0
        branches = [0]
        for s in sel.selections:
            if isinstance(s, FieldNode):
                total += self.field(parent, s, depth)
                continue
            if isinstance(s, InlineFragmentNode):
                cond, body = s.type_condition, s.selection_set
            elif isinstance(s, FragmentSpreadNode) and s.name.value in self.fragments:
                frag = self.fragments[s.name.value]
                cond, body = frag.type_condition, frag.selection_set
            else:
                continue
            on = self.schema.get_type(cond.name.value) if cond else parent
            cost = self.selections(on, body, depth + 1)
            if on is parent:
                total += cost
            else:
                branches.append(cost)
        return total + max(branches)

    def field(self, parent: GraphQLNamedType | None, node: FieldNode, depth: int) -> int:
        name = node.name.value
        definition = None
        if isinstance(parent, GraphQLObjectType | GraphQLInterfaceType):
            definition = parent.fields.get(name)
        if definition is None:
            # __typename, introspection meta fields: their subtree is counted plainly.
            if node.selection_set is None:
                return 0
            return 1 + self.selections(None, node.selection_set, depth)
        assert parent is not None
        named, is_list = _unwrap(definition.type)
        if named.name.endswith("Connection"):
            first = _arg(node, "first", self.variables)
            times = self.default_first if first is None else max(0, int(first))
        elif name == "nodes" and parent is self.schema.query_type:
            ids = _arg(node, "ids", self.variables)
            times = len(ids) if isinstance(ids, list) else LIST_ESTIMATE
        elif is_list and node.selection_set is not None and not parent.name.endswith("Connection"):
            times = LIST_ESTIMATE
        else:
            times = 1
        if node.selection_set is None:
            return 0
        return 1 + times * self.selections(named, node.selection_set, depth)


def estimate_cost(
    schema: GraphQLSchema,
    document: Any,
    operation_name: str | None,
    variables: Mapping[str, Any] | None,
    default_first: int,
) -> int:
    """The estimated cost of the operation that would run (see the module doc)."""
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if operation_name is not None:
        operations = [o for o in operations if o.name and o.name.value == operation_name]
    if not operations:
        return 0
    op = operations[0]
    root = schema.get_root_type(op.operation)
    return _Estimator(schema, fragments, variables or {}, default_first).selections(
        root, op.selection_set
    )


class CostLimiter(SchemaExtension):
    """Refuse operations whose estimated cost is over ``max_cost`` (QUERY_TOO_COMPLEX)."""

    def __init__(self, *, max_cost: int, default_first: int) -> None:
        self.max_cost = max_cost
        self.default_first = default_first

    def on_execute(self) -> Iterator[None]:
        ctx = self.execution_context
        if ctx.graphql_document is not None and ctx.result is None:
            cost = estimate_cost(
                ctx.schema._schema,
                ctx.graphql_document,
                ctx.operation_name,
                ctx.variables,
                self.default_first,
            )
            if cost > self.max_cost:
                error = QueryTooComplexError(
                    f"query cost {cost} is over the maximum {self.max_cost}; ask for smaller "
                    "pages (`first`) or fewer nested connections",
                    details={"cost": cost, "maxCost": self.max_cost},
                )
                ctx.result = ExecutionResult(
                    data=None, errors=[GraphQLError(error.message, original_error=error)]
                )
        yield
