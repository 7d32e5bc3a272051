"""What a GraphQL document may ask for (API-3), measured in time linear in its size.

Everything computed from a client's document before it runs is linear in the
document and bounded (STYLE rule 15), so that no document can stall the process:

1. :func:`parse_document` first runs graphql-core's lexer over the text, counting
   tokens and bracket nesting, and stops at the first token over either limit
   (``max_query_tokens``, ``max_query_nesting``); only then does the (recursive)
   parser run, on a document whose nesting is known to be small.
2. :func:`select_operation` picks the operation that would run: a document with
   several operations needs ``operationName`` (OPERATION_NAME_REQUIRED), a name that
   is not there is OPERATION_NOT_FOUND. GraphQL requires both; strawberry ran the
   first operation instead.
3. :func:`measure` walks the operation once with every fragment measured once: the
   fragments are ordered so that a fragment comes after those it spreads, and each is
   summarised (depth, aliases, fields, cost) from the summaries before it. A fragment
   spread twice, or a thousand times, costs one dictionary lookup per spread. A
   document whose fragments spread each other in a cycle, or through more than
   ``max_fragment_depth`` levels, is refused before any walk.

The measures of an operation (fragments expanded, in integers, never by expanding):

- **depth**: field nesting, as strawberry's ``QueryDepthLimiter`` counts it (a leaf
  is 0; introspection fields are not counted, the cost bounds them);
- **aliases** and **fields**: aliased and plain field selections after expansion;
- **cost** = *objects* + *work*. *objects* estimates the objects the answer may hold:
  every selected field of an object type costs 1 (scalar leaves are free); a
  connection's subtree (a type named ``…Connection``) counts ``first`` times (its
  default page size when not given), ``nodes(ids)`` once per id, any other list of
  objects :data:`LIST_ESTIMATE` times; fragments on another type than the field's
  are alternatives (the costliest counts). *work* is what each root field costs from
  its arguments (:func:`root_work`): a read's budget, limit and depth, a search's
  limit and depth, a write's changes, …, aliases included, all against the one
  request budget ``max_query_cost`` (docs/operations.md, "Request limits").

The module knows graphql-core's AST and the schema's types, nothing of HTTP.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from graphql import (
    DocumentNode,
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
    OperationType,
    SelectionSetNode,
    Source,
    ValueNode,
    VariableNode,
    parse,
    value_from_ast_untyped,
)
from graphql.language import Lexer, TokenKind
from graphql.validation import ValidationRule
from strawberry.extensions import SchemaExtension

from graphsvc.core.input_bounds import excerpt, int64_literal_ok
from graphsvc.errors import (
    InvalidInputError,
    OperationNameRequiredError,
    OperationNotFoundError,
    QueryTooComplexError,
    QueryTooDeepError,
)
from graphsvc.settings import Settings, fill
from graphsvc.telemetry.request_scope import current

__all__ = [
    "LIST_ESTIMATE",
    "PUBLIC_ROOT_FIELDS",
    "DocumentGate",
    "DocumentLimits",
    "Measure",
    "Prepared",
    "estimate_cost",
    "measure",
    "parse_document",
    "root_field_names",
    "root_work",
    "select_operation",
    "validation_rules",
]

LIST_ESTIMATE: Final = 10
# Root fields anyone may ask for without a token (GraphiQL loads the schema first).
PUBLIC_ROOT_FIELDS: Final = frozenset({"health", "healthTyped", "__schema", "__type", "__typename"})
_OPEN = frozenset({TokenKind.BRACE_L, TokenKind.PAREN_L, TokenKind.BRACKET_L})
_CLOSE = frozenset({TokenKind.BRACE_R, TokenKind.PAREN_R, TokenKind.BRACKET_R})
_META_TYPES: Final = {"__schema": "__Schema", "__type": "__Type"}
# Values above this are all "too much"; keeps the integers of a hostile document small.
_CEILING: Final = 10**12


@dataclass(frozen=True)
class DocumentLimits:
    """The limits of one document (settings ``max_query_*``, ``graph_first_*``)."""

    max_tokens: int = 20_000
    max_nesting: int = 64
    max_depth: int = 12
    max_fragment_depth: int = 16
    max_aliases: int = 30
    max_fields: int = 10_000
    max_cost: int = 250_000
    default_first: int = 20
    search_limit: int = 10
    read_limit: int = 24
    inspect_limit: int = 20
    max_limit: int = 10_000
    depth: int = 2
    max_retrieval_depth: int = 32
    max_read_budget: int = 1_000_000

    @classmethod
    def from_settings(cls, s: Settings) -> DocumentLimits:
        # The GraphQL limits and the read defaults of their names; two depths are
        # renamed (a document's field depth, the retrieval's largest depth).
        return fill(
            cls,
            s.graphql,
            s.read,
            max_depth=s.graphql.max_query_depth,
            max_retrieval_depth=s.ranking.max_depth,
        )


@dataclass(frozen=True)
class Measure:
    """The measures of one operation, fragments expanded (see the module doc)."""

    depth: int = 0
    aliases: int = 0
    fields: int = 0
    objects: int = 0
    work: int = 0

    @property
    def cost(self) -> int:
        return self.objects + self.work


@dataclass(frozen=True)
class Prepared:
    """A document the HTTP front door parsed, measured and validated already."""

    query: str
    document: DocumentNode
    errors: tuple[GraphQLError, ...]


def parse_document(query: str, limits: DocumentLimits) -> DocumentNode:
    """Parse ``query`` after a linear scan of its tokens and bracket nesting.

    Raises:
        QueryTooComplexError: more than ``max_tokens`` tokens.
        QueryTooDeepError: brackets nested deeper than ``max_nesting``.
        InvalidInputError: an integer literal outside the signed 64-bit range.
        GraphQLError: a syntax error (graphql-core's message and location).
    """
    lexer = Lexer(Source(query))
    tokens = 0
    nesting = 0
    while True:
        token = lexer.advance()
        kind = token.kind
        if kind == TokenKind.EOF:
            break
        tokens += 1
        if tokens > limits.max_tokens:
            raise QueryTooComplexError(
                f"the document has more than {limits.max_tokens} tokens",
                details={"maxTokens": limits.max_tokens},
            )
        if kind in _OPEN:
            nesting += 1
            if nesting > limits.max_nesting:
                raise QueryTooDeepError(
                    f"the document nests brackets deeper than {limits.max_nesting}",
                    details={"maxNesting": limits.max_nesting},
                )
        elif kind in _CLOSE:
            nesting -= 1
        elif kind == TokenKind.INT and not int64_literal_ok(token.value or "0"):
            # An Int argument is 32-bit (validation refuses more), but a JSON
            # argument's literal reaches the driver as it is (core/input_bounds.py).
            raise InvalidInputError(
                f"the integer {excerpt(token.value or '')} at line {token.line} is outside the "
                "64-bit range",
                details={"line": token.line, "column": token.column},
            )
    return parse(query, max_tokens=limits.max_tokens)


def select_operation(document: DocumentNode, operation_name: str | None) -> OperationDefinitionNode:
    """The operation of ``document`` that a request with ``operation_name`` runs.

    Raises:
        InvalidInputError: the document holds no operation.
        OperationNameRequiredError: several operations and no name.
        OperationNotFoundError: no operation of that name.
    """
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if operation_name is None:
        if not operations:
            raise InvalidInputError("the document holds no operation")
        if len(operations) > 1:
            raise OperationNameRequiredError(
                "the document holds several operations: name the one to run (operationName)",
                details={"operations": len(operations)},
            )
        return operations[0]
    for op in operations:
        if op.name is not None and op.name.value == operation_name:
            return op
    raise OperationNotFoundError(
        "the document holds no operation of that name", details={"operations": len(operations)}
    )


def _fragments(document: DocumentNode) -> dict[str, FragmentDefinitionNode]:
    return {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}


def _selections(sel: SelectionSetNode | None) -> Iterator[Any]:
    """Every selection under ``sel`` (fields' subselections too), no spread followed."""
    stack = [sel] if sel is not None else []
    while stack:
        current_set = stack.pop()
        for s in current_set.selections:
            yield s
            sub = getattr(s, "selection_set", None)
            if sub is not None:
                stack.append(sub)


def root_field_names(document: DocumentNode, operation: OperationDefinitionNode) -> frozenset[str]:
    """The root fields ``operation`` selects, through fragments and inline fragments."""
    fragments = _fragments(document)
    names: set[str] = set()
    seen: set[str] = set()
    stack = [operation.selection_set]
    while stack:
        for s in stack.pop().selections:
            if isinstance(s, FieldNode):
                names.add(s.name.value)
            elif isinstance(s, InlineFragmentNode):
                stack.append(s.selection_set)
            elif isinstance(s, FragmentSpreadNode) and s.name.value not in seen:
                seen.add(s.name.value)
                if s.name.value in fragments:
                    stack.append(fragments[s.name.value].selection_set)
    return frozenset(names)


def _fragment_order(
    fragments: dict[str, FragmentDefinitionNode], limits: DocumentLimits
) -> list[str]:
    """Fragment names, each after the fragments it spreads (Kahn's algorithm).

    Raises:
        InvalidInputError: fragments spread each other in a cycle.
        QueryTooDeepError: a chain of spreads is longer than ``max_fragment_depth``.
    """
    deps: dict[str, set[str]] = {}
    for name, frag in fragments.items():
        deps[name] = {
            s.name.value
            for s in _selections(frag.selection_set)
            if isinstance(s, FragmentSpreadNode) and s.name.value in fragments
        }
    users: dict[str, list[str]] = {name: [] for name in fragments}
    waiting = {name: len(d) for name, d in deps.items()}
    for name, d in deps.items():
        for dep in d:
            users[dep].append(name)
    ready = [name for name, n in waiting.items() if n == 0]
    chain = dict.fromkeys(ready, 1)
    order: list[str] = []
    while ready:
        name = ready.pop()
        order.append(name)
        for user in users[name]:
            chain[user] = max(chain.get(user, 1), chain[name] + 1)
            waiting[user] -= 1
            if waiting[user] == 0:
                ready.append(user)
    if len(order) < len(fragments):
        cyclic = sorted(set(fragments) - set(order))[:5]
        raise InvalidInputError(
            "fragments spread each other in a cycle", details={"fragments": cyclic}
        )
    longest = max(chain.values(), default=0)
    if longest > limits.max_fragment_depth:
        raise QueryTooDeepError(
            f"fragments spread each other {longest} levels deep; at most "
            f"{limits.max_fragment_depth} are allowed",
            details={"fragmentDepth": longest, "maxFragmentDepth": limits.max_fragment_depth},
        )
    return order


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


def _int(value: Any, default: int, low: int, high: int) -> int:
    number = value if isinstance(value, int) and not isinstance(value, bool) else default
    return max(low, min(high, number))


def root_work(
    operation: OperationType,
    node: FieldNode,
    variables: Mapping[str, Any],
    limits: DocumentLimits,
) -> int:
    """What one root field costs from its arguments (docs/operations.md).

    Arguments missing or of the wrong type count at their defaults (coercion refuses
    the wrong ones later); values are clamped to their allowed ranges first.
    """
    name = node.name.value

    def arg(key: str) -> Any:
        return _arg(node, key, variables)

    if operation == OperationType.MUTATION:
        if name == "write":
            changes = arg("changes")
            return 100 + 50 * (len(changes) if isinstance(changes, list) else 1)
        heavy = {
            "purge": 2_000,
            "purgeTyped": 2_000,
            "atomise": 5_000,
            "atomiseTyped": 5_000,
            "exportForensicBundle": 5_000,
            "exportForensicBundleTyped": 5_000,
        }
        return heavy.get(name, 50)
    depth = _int(arg("depth"), limits.depth, 0, limits.max_retrieval_depth)
    if name == "search":
        limit = _int(arg("limit"), limits.search_limit, 0, limits.max_limit)
        return 50 + 4 * limit + 200 * depth
    if name == "read":
        limit = _int(arg("limit"), limits.read_limit, 0, limits.max_limit)
        budget = _int(arg("memoryTokenBudget"), 0, 0, limits.max_read_budget)
        return 100 + 4 * limit + 200 * depth + budget // 20
    if name == "inspect":
        limit = _int(arg("limit"), limits.inspect_limit, 0, limits.max_limit)
        start = _int(arg("rangeStart"), 0, 0, 1 << 20)
        end = _int(arg("rangeEnd"), start, start, start + (1 << 20))
        return 20 + 2 * limit + (end - start) // 64
    if name in {"lineage", "lineageGraph"}:
        return 50 + 500 * _int(arg("depth"), 3, 0, limits.max_retrieval_depth)
    if name == "atoms":
        return 220 if arg("text") else 20
    if name == "nodes":
        ids = arg("ids")
        return 5 * (len(ids) if isinstance(ids, list) else LIST_ESTIMATE)
    if name.startswith("__"):
        return 0
    return {"health": 1, "healthTyped": 1, "atom": 5, "node": 5}.get(name, 20)


class _Walker:
    """One memoised walk of a document (see the module doc)."""

    def __init__(
        self,
        schema: GraphQLSchema,
        document: DocumentNode,
        variables: Mapping[str, Any],
        limits: DocumentLimits,
    ) -> None:
        self.schema = schema
        self.variables = variables
        self.limits = limits
        self.fragments = _fragments(document)
        self.memo: dict[str, Measure] = {}
        self.operation = OperationType.QUERY
        for name in _fragment_order(self.fragments, limits):
            frag = self.fragments[name]
            on = schema.get_type(frag.type_condition.name.value)
            self.memo[name] = self.selections(on, frag.selection_set)

    def selections(self, parent: GraphQLNamedType | None, sel: SelectionSetNode | None) -> Measure:
        if sel is None:
            return Measure()
        depth = aliases = fields = objects = work = 0
        branches = [0]
        for s in sel.selections:
            if isinstance(s, FieldNode):
                m = self.field(parent, s)
                on: Any = parent
            elif isinstance(s, InlineFragmentNode):
                cond = s.type_condition
                on = self.schema.get_type(cond.name.value) if cond else parent
                m = self.selections(on, s.selection_set)
            elif isinstance(s, FragmentSpreadNode) and s.name.value in self.memo:
                m = self.memo[s.name.value]
                on = self.schema.get_type(self.fragments[s.name.value].type_condition.name.value)
            else:
                continue  # an unknown fragment: validation names it
            depth = max(depth, m.depth)
            aliases = min(_CEILING, aliases + m.aliases)
            fields = min(_CEILING, fields + m.fields)
            work = min(_CEILING, work + m.work)
            if on is parent:
                objects = min(_CEILING, objects + m.objects)
            else:
                branches.append(m.objects)
        return Measure(depth, aliases, fields, min(_CEILING, objects + max(branches)), work)

    def field(self, parent: GraphQLNamedType | None, node: FieldNode) -> Measure:
        name = node.name.value
        alias = 1 if node.alias is not None else 0
        root = parent is not None and parent in (
            self.schema.query_type,
            self.schema.mutation_type,
        )
        work = root_work(self.operation, node, self.variables, self.limits) if root else 0
        definition = None
        if isinstance(parent, GraphQLObjectType | GraphQLInterfaceType):
            definition = parent.fields.get(name)
        if definition is None and name in _META_TYPES:
            named: Any = self.schema.get_type(_META_TYPES[name])
            is_list = False
        elif definition is None:
            # __typename or a field the schema lacks (validation names it).
            if node.selection_set is None:
                return Measure(0, alias, 1, 0, work)
            inner = self.selections(None, node.selection_set)
            return Measure(
                1 + inner.depth, alias + inner.aliases, 1 + inner.fields, 1 + inner.objects, work
            )
        else:
            named, is_list = _unwrap(definition.type)
        if node.selection_set is None:
            return Measure(0, alias, 1, 0, work)
        inner = self.selections(named, node.selection_set)
        if named.name.endswith("Connection"):
            first = _arg(node, "first", self.variables)
            times = _int(first, self.limits.default_first, 0, _CEILING)
        elif name == "nodes" and parent is self.schema.query_type:
            ids = _arg(node, "ids", self.variables)
            times = len(ids) if isinstance(ids, list) else LIST_ESTIMATE
        elif is_list and parent is not None and not parent.name.endswith("Connection"):
            times = LIST_ESTIMATE
        else:
            times = 1
        # Introspection is not counted in depth (as strawberry's limiter); cost bounds it.
        depth = 0 if name.startswith("__") else 1 + inner.depth
        return Measure(
            depth,
            alias + inner.aliases,
            min(_CEILING, 1 + inner.fields),
            min(_CEILING, 1 + times * inner.objects),
            min(_CEILING, work + inner.work),
        )


def measure(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation: OperationDefinitionNode,
    variables: Mapping[str, Any] | None,
    limits: DocumentLimits,
) -> Measure:
    """Measure ``operation`` and hold it to ``limits``.

    Raises:
        InvalidInputError: fragments spread each other in a cycle.
        QueryTooDeepError: the operation (or a chain of fragments) is too deep.
        QueryTooComplexError: too many aliases or fields, or a cost over the budget.
    """
    walker = _Walker(schema, document, variables or {}, limits)
    walker.operation = operation.operation
    root = schema.get_root_type(operation.operation)
    m = walker.selections(root, operation.selection_set)
    if m.depth > limits.max_depth:
        raise QueryTooDeepError(
            f"the operation nests fields {m.depth} deep; at most {limits.max_depth} are allowed",
            details={"depth": m.depth, "maxDepth": limits.max_depth},
        )
    if m.aliases > limits.max_aliases:
        raise QueryTooComplexError(
            f"the operation has {m.aliases} aliases; at most {limits.max_aliases} are allowed",
            details={"aliases": m.aliases, "maxAliases": limits.max_aliases},
        )
    if m.fields > limits.max_fields:
        raise QueryTooComplexError(
            f"the operation selects {m.fields} fields once its fragments are spread; at most "
            f"{limits.max_fields} are allowed",
            details={"fields": m.fields, "maxFields": limits.max_fields},
        )
    if m.cost > limits.max_cost:
        raise QueryTooComplexError(
            f"query cost {m.cost} is over the maximum {limits.max_cost}; ask for smaller pages "
            "(`first`), smaller limits, budgets or depths, or fewer fields per request",
            details={
                "cost": m.cost,
                "maxCost": limits.max_cost,
                "objects": m.objects,
                "work": m.work,
            },
        )
    return m


def estimate_cost(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation_name: str | None,
    variables: Mapping[str, Any] | None,
    default_first: int,
) -> int:
    """The estimated objects of the operation that would run (0 when there is none)."""
    try:
        op = select_operation(document, operation_name)
    except (InvalidInputError, OperationNotFoundError, OperationNameRequiredError):
        return 0
    limits = DocumentLimits(default_first=default_first)
    walker = _Walker(schema, document, variables or {}, limits)
    walker.operation = op.operation
    return walker.selections(schema.get_root_type(op.operation), op.selection_set).objects


def _refused(error: Exception) -> GraphQLError:
    return GraphQLError(str(error), original_error=error)


class DocumentGate(SchemaExtension):
    """Hold every operation to :class:`DocumentLimits` before graphql-core validates it.

    Over HTTP the front door (:mod:`graphsvc.http.front_door`) did the work already,
    off the event loop: the document it parsed and the errors its validation found
    are taken from the request scope as they are. In process (``execute_sync``, the
    tests) the same checks run here.
    """

    def __init__(self, *, limits: DocumentLimits) -> None:
        self.limits = limits

    def _prepared(self) -> Prepared | None:
        sc = current()
        prepared = getattr(sc, "prepared", None) if sc is not None else None
        if isinstance(prepared, Prepared) and prepared.query == self.execution_context.query:
            return prepared
        return None

    def on_parse(self) -> Iterator[None]:
        prepared = self._prepared()
        if prepared is not None:
            self.execution_context.graphql_document = prepared.document
        yield

    def on_validate(self) -> Iterator[None]:
        ctx = self.execution_context
        prepared = self._prepared()
        if prepared is not None:
            ctx.pre_execution_errors = list(prepared.errors)
        elif ctx.graphql_document is not None and ctx.pre_execution_errors is None:
            try:
                # The name the request gave, not strawberry's fallback to the first one.
                name = getattr(ctx, "_provided_operation_name", None)
                op = select_operation(ctx.graphql_document, name)
                measure(ctx.schema._schema, ctx.graphql_document, op, ctx.variables, self.limits)
            except (
                InvalidInputError,
                OperationNameRequiredError,
                OperationNotFoundError,
                QueryTooComplexError,
                QueryTooDeepError,
            ) as exc:
                ctx.pre_execution_errors = [_refused(exc)]
        yield


# graphql-core's rules plus strawberry's own two, as strawberry validates.
def validation_rules() -> tuple[type[ValidationRule], ...]:
    from graphql import specified_rules
    from strawberry.schema.validation_rules.maybe_null import MaybeNullValidationRule
    from strawberry.schema.validation_rules.one_of import OneOfInputValidationRule

    return (*specified_rules, MaybeNullValidationRule, OneOfInputValidationRule)
