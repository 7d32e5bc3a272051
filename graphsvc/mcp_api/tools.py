"""The MCP tools: one per public operation, each one call into the Service facade.

:data:`TOOLS` names, for each tool, its GraphQL root field: the tool's description
is that field's, its arguments are that field's (:mod:`graphsvc.mcp_api.arguments`)
and the capability it needs is :func:`graphsvc.keys.auth.required_capability` of that
field, so a token may call through MCP exactly what it may call through GraphQL.
Arguments reach the Service under their snake_case names (``includeArchived`` →
``include_archived``), for search, read and inspect as the fields of the operation's
request (:mod:`graphsvc.core.requests`); the few that need a conversion (a write's
changes, observe's host input, recordUse's atoms) are converted by the same
:mod:`graphsvc.inputs.models` functions the GraphQL resolvers use.

What a tool answers is the operation's JSON form (the CLI's ``--json``), except
``read``: the model-facing ``text`` plus the presented refs, the selection and the
manifest id (the manifest and diagnostics stay with GraphQL and the CLI).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphql import GraphQLSchema
from pydantic import BaseModel, ValidationError

from graphsvc.core.batch_sizes import check_batch_sizes
from graphsvc.core.binding import Binding
from graphsvc.core.requests import InspectRequest, ReadRequest, SearchRequest
from graphsvc.core.write_plan import Limits
from graphsvc.errors import InvalidInputError
from graphsvc.inputs.models import HostInputIn, parse_changes
from graphsvc.inputs.text_input import check_json_values
from graphsvc.keys.auth import required_capability
from graphsvc.mcp_api.arguments import ToolSchema, arguments_model
from graphsvc.service import Service

__all__ = ["TOOLS", "Tool", "ToolDef", "build_tools"]

Run = Callable[[Service, Binding, BaseModel, dict[str, Any]], dict[str, Any]]

# ATM-7: the operator surfaces (mutation, CLI) always allow 3 curator retries.
_OPERATOR_RETRIES = 3


def _kwargs(args: BaseModel, *, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The given arguments as the Service's keyword arguments (None: not given)."""
    return {_snake(name): value for name, value in args if value is not None and name not in skip}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _search(service: Service, binding: Binding, a: BaseModel, _: dict[str, Any]) -> dict[str, Any]:
    return service.search(binding, SearchRequest(**_kwargs(a))).to_json()


def _read(service: Service, binding: Binding, a: BaseModel, _: dict[str, Any]) -> dict[str, Any]:
    r = service.read(binding, ReadRequest(**_kwargs(a)))
    return {
        "text": r.text,
        "formatVersion": r.format_version,
        "items": [i.to_dict() for i in r.items],
        "selection": r.selection.to_dict(),
        "manifestId": r.manifest["id"],
        "cursor": r.cursor,
    }


def _inspect(service: Service, binding: Binding, a: BaseModel, _: dict[str, Any]) -> dict[str, Any]:
    return service.inspect(binding, InspectRequest(**_kwargs(a))).to_json()


def _lineage(service: Service, binding: Binding, a: BaseModel, _: dict[str, Any]) -> dict[str, Any]:
    return service.lineage(binding, **_kwargs(a))


def _write(service: Service, binding: Binding, a: BaseModel, raw: dict[str, Any]) -> dict[str, Any]:
    # The core Changes come from the raw JSON through parse_changes, as in GraphQL
    # (it adds the offending change id to a shape error); the model checked types.
    changes = parse_changes(raw["changes"])
    options = getattr(a, "options", None)
    key = getattr(options, "idempotencyKey", None)
    return service.write(binding, changes, key).to_json()


def _observe(service: Service, binding: Binding, a: BaseModel, _: dict[str, Any]) -> dict[str, Any]:
    host_input = getattr(a, "input")  # noqa: B009 (a generated model's field)
    assert isinstance(host_input, HostInputIn)
    return {"inputToken": service.observe(binding, host_input)}


def _record_use(
    service: Service, binding: Binding, a: BaseModel, _: dict[str, Any]
) -> dict[str, Any]:
    kwargs = _kwargs(a, skip=frozenset({"atoms"}))
    atoms = getattr(a, "atoms", None)
    refs = [ref.core() for ref in atoms] if atoms else None
    return service.record_use(binding, atoms=refs, **kwargs)


def _reset_usage(
    service: Service, binding: Binding, a: BaseModel, _: dict[str, Any]
) -> dict[str, Any]:
    return {"deleted": service.reset_usage(binding, **_kwargs(a))}


def _purge(service: Service, binding: Binding, a: BaseModel, _: dict[str, Any]) -> dict[str, Any]:
    return service.purge(binding, **_kwargs(a))


def _atomise(service: Service, binding: Binding, a: BaseModel, _: dict[str, Any]) -> dict[str, Any]:
    return service.atomise(binding, retries=_OPERATOR_RETRIES, **_kwargs(a)).to_json()


def _set_namespace_policy(
    service: Service, binding: Binding, a: BaseModel, _: dict[str, Any]
) -> dict[str, Any]:
    return service.set_namespace_policy(binding, **_kwargs(a))


def _export_forensic_bundle(
    service: Service, binding: Binding, a: BaseModel, _: dict[str, Any]
) -> dict[str, Any]:
    return service.export_forensic_bundle(binding, **_kwargs(a)).to_json()


@dataclass(frozen=True)
class ToolDef:
    """What the MCP layer adds to a GraphQL root field to make it a tool."""

    field: str
    mutation: bool
    run: Run
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    # How the tool fits an agent's loop (appended to the field's description).
    usage: str = ""
    arguments: tuple[tuple[str, str], ...] = ()

    @property
    def name(self) -> str:
        return _snake(self.field)


TOOLS: tuple[ToolDef, ...] = (
    ToolDef(
        "search",
        False,
        _search,
        read_only=True,
        idempotent=True,
        usage="Find atoms; pass `cursor` from the answer for the next page.",
        arguments=(("query", "What to look for, in words."),),
    ),
    ToolDef(
        "read",
        False,
        _read,
        read_only=True,
        idempotent=True,
        usage="Answers `text` (the bodies to put in the model's context, never over "
        "memoryTokenBudget tokens), the presented refs and `manifestId`: pass the "
        "manifestId to `observe` (presentations) and to `record_use` (manifest.id).",
        arguments=(
            ("query", "What to read about, in words."),
            ("memoryTokenBudget", "The most tokens (cl100k_base) the text may take."),
        ),
    ),
    ToolDef(
        "inspect",
        False,
        _inspect,
        read_only=True,
        idempotent=True,
        usage="One atom (its head, or `rev`) and its one-hop neighbours.",
    ),
    ToolDef(
        "lineage",
        False,
        _lineage,
        read_only=True,
        idempotent=True,
        usage="Where an atom came from (atomisation) and what it links, as nodes and edges.",
    ),
    ToolDef(
        "write",
        True,
        _write,
        usage="Batches of create/revise/retire; a change's `input` is the InputToken "
        "from `observe` (required for agent tokens); a link's target is an issued "
        "{atomId, rev} or {local: <change id of this batch>}; revise and retire name "
        "the head they saw (`target`), else CAS_CONFLICT. The same "
        "options.idempotencyKey with the same batch answers the first outcome again.",
    ),
    ToolDef(
        "observe",
        True,
        _observe,
        usage="Declare what the answer is made from (the read's manifestId in "
        "`presentations`, sources, basis revisions, payloadDigest) and get the "
        "opaque InputToken that `write` needs.",
    ),
    ToolDef(
        "recordUse",
        True,
        _record_use,
        usage="Report that a response built from a read was accepted: "
        "manifest is {id: manifestId}; the same eventId again is a no-op.",
        arguments=(("eventId", "The host's id of the accepted response (deduplicated)."),),
    ),
    ToolDef(
        "resetUsage",
        True,
        _reset_usage,
        destructive=True,
        idempotent=True,
    ),
    ToolDef("atomise", True, _atomise),
    ToolDef("setNamespacePolicy", True, _set_namespace_policy, idempotent=True),
    ToolDef("exportForensicBundle", True, _export_forensic_bundle, read_only=True),
    ToolDef("purge", True, _purge, destructive=True, idempotent=True),
)


@dataclass(frozen=True)
class Tool:
    """One MCP tool, ready to list and call."""

    name: str
    capability: str
    description: str
    arguments: type[BaseModel]
    definition: ToolDef
    # A write's batch is measured before it is validated (as GraphQL's WriteBatchGate).
    batch_limits: Limits | None = None
    max_json_depth: int = 64

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments (from :attr:`arguments`)."""
        return self.arguments.model_json_schema(schema_generator=ToolSchema)

    def parse(self, raw: dict[str, Any]) -> BaseModel:
        """Validate a call's arguments.

        Raises:
            InvalidInputError: wrong names or types, a lone surrogate in a string, or
                nesting deeper than ``max_json_depth``.
            BudgetExceededError: a write batch over the configured sizes.
        """
        check_json_values(raw, self.max_json_depth, "arguments")
        if self.batch_limits is not None:
            check_batch_sizes(raw.get("changes"), self.batch_limits)
        try:
            return self.arguments.model_validate(raw)
        except ValidationError as exc:
            raise InvalidInputError(_describe(exc)) from exc

    def run(self, service: Service, binding: Binding, raw: dict[str, Any]) -> dict[str, Any]:
        """Validate ``raw`` and run the operation for ``binding``.

        Raises:
            GraphsvcError: the operation's own errors, with their codes.
        """
        return self.definition.run(service, binding, self.parse(raw), raw)


def build_tools(schema: GraphQLSchema, service: Service) -> dict[str, Tool]:
    """Every tool of :data:`TOOLS`, by name, from the built GraphQL schema."""
    batch_limits = service.write_deps().limits
    out: dict[str, Tool] = {}
    for d in TOOLS:
        root = schema.mutation_type if d.mutation else schema.query_type
        assert root is not None
        field = root.fields[d.field]
        out[d.name] = Tool(
            name=d.name,
            capability=required_capability(d.field, mutation=d.mutation),
            description=" ".join(p for p in (field.description or "", d.usage) if p),
            arguments=arguments_model(d.name, field, dict(d.arguments)),
            definition=d,
            batch_limits=batch_limits if d.field == "write" else None,
            max_json_depth=service.settings.graphql.max_json_depth,
        )
    return out


def _describe(exc: ValidationError) -> str:
    """The first few validation errors as ``path: message`` (never the input value)."""
    parts = [
        f"{'.'.join(str(p)[:64] for p in err['loc']) or 'arguments'}: {err['msg']}"
        for err in exc.errors(include_input=False)[:5]
    ]
    more = exc.error_count() - 5
    return "invalid arguments: " + "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")
