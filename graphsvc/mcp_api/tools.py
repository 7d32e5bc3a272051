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

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from graphql import GraphQLSchema
from pydantic import BaseModel, ValidationError

from graphsvc.core.batch_sizes import check_batch_sizes
from graphsvc.core.binding import Binding
from graphsvc.core.requests import InspectRequest, ReadRequest, SearchRequest
from graphsvc.core.session_window import (
    Shown,
    shown_in_inspect,
    shown_in_read,
    shown_in_search,
    written,
)
from graphsvc.core.write_plan import Limits
from graphsvc.errors import InvalidInputError
from graphsvc.inputs.models import parse_changes
from graphsvc.inputs.text_input import check_json_values
from graphsvc.keys.auth import required_capability
from graphsvc.mcp_api import memory_tools
from graphsvc.mcp_api.arguments import ToolSchema, arguments_model
from graphsvc.mcp_api.session import Call
from graphsvc.service import Service

__all__ = ["TOOLS", "Tool", "ToolDef", "build_tools", "listed"]

Run = Callable[[Call, BaseModel], dict[str, Any]]

# ATM-7: the operator surfaces (mutation, CLI) always allow 3 curator retries.
_OPERATOR_RETRIES = 3


def _kwargs(args: BaseModel, *, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The given arguments as the Service's keyword arguments (None: not given)."""
    return {_snake(name): value for name, value in args if value is not None and name not in skip}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class _Answer(Protocol):
    """An operation's result, which answers as its JSON form (the CLI's ``--json``)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        ...


def _answer(op: Callable[..., _Answer], **fixed: Any) -> Run:
    """A tool that answers the JSON form of ``op(service, binding, **arguments)``
    (``fixed``: arguments the tool sets itself)."""

    def run(call: Call, a: BaseModel) -> dict[str, Any]:
        return op(call.service, call.binding, **fixed, **_kwargs(a)).to_json()

    return run


def _showing(
    op: Callable[[Service, Binding, Any], _Answer],
    request: Callable[..., object],
    shown: Callable[[dict[str, Any]], list[Shown]],
) -> Run:
    """A reading tool: ``op`` on the request its arguments make, whose answer adds
    what it showed to the session's window (MCP-1)."""

    def run(call: Call, a: BaseModel) -> dict[str, Any]:
        answer = op(call.service, call.binding, request(**_kwargs(a))).to_json()
        call.show(shown(answer))
        return answer

    return run


def _read(call: Call, a: BaseModel) -> dict[str, Any]:
    r = call.service.read(call.binding, ReadRequest(**_kwargs(a)))
    items = [i.to_dict() for i in r.items]
    call.show(shown_in_read(r.manifest["id"], items))
    return {
        "text": r.text,
        "formatVersion": r.format_version,
        "items": items,
        "selection": r.selection.to_dict(),
        "manifestId": r.manifest["id"],
        "cursor": r.cursor,
    }


def _lineage(call: Call, a: BaseModel) -> dict[str, Any]:
    found = call.service.lineage(call.binding, **_kwargs(a)).to_json()
    # The typed graph's names (LineageGraph: a node's atomId and excerpt, an edge's
    # kind), one vocabulary with GraphQL (docs/agents.md, "Vocabulary").
    return {**found, "nodes": _renamed(found["nodes"]), "edges": _renamed(found["edges"])}


def _renamed(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{_LINEAGE_NAMES.get(k, k): v for k, v in item.items()} for item in items]


_LINEAGE_NAMES = {"id": "atomId", "text": "excerpt", "type": "kind"}


def _write(call: Call, a: BaseModel) -> dict[str, Any]:
    # The core Changes come from the raw JSON through parse_changes, as in GraphQL
    # (it adds the offending change id to a shape error); the model checked types.
    changes = parse_changes(call.raw["changes"])
    options = getattr(a, "options", None)
    key = getattr(options, "idempotencyKey", None)
    # The session's token goes on every change (MCP-2); the model never passes one.
    with call.change_token() as issued:
        if issued is not None:
            changes = [dataclasses.replace(c, input=issued.token) for c in changes]
        answer = call.service.write(call.binding, changes, key).to_json()
    if issued is not None and answer["repeated"]:
        call.discard(issued)
    call.show(written(answer))
    return answer


def _record_use(call: Call, a: BaseModel) -> dict[str, Any]:
    kwargs = _kwargs(a, skip=frozenset({"atoms"}))
    atoms = getattr(a, "atoms", None)
    refs = [ref.core() for ref in atoms] if atoms else None
    return call.service.record_use(call.binding, atoms=refs, **kwargs).to_json()


def _reset_usage(call: Call, a: BaseModel) -> dict[str, Any]:
    return {"deleted": call.service.reset_usage(call.binding, **_kwargs(a))}


@dataclass(frozen=True)
class ToolDef:
    """A tool: a GraphQL root field (its arguments and capability), or, with
    ``model``, a tool of its own (:mod:`graphsvc.mcp_api.memory_tools`)."""

    field: str
    mutation: bool
    run: Run
    # What a mutation does (hints for the host); a query changes nothing, so it is
    # read-only and idempotent whatever these say (read_only_hint, idempotent_hint).
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    # What the tool is for and when to call it, written for a model (no SPEC numbers).
    description: str = ""
    arguments: tuple[tuple[str, str], ...] = ()
    # The arguments of a tool that is no GraphQL field, and the capability it needs.
    model: type[BaseModel] | None = None
    capability: str = "read"
    # Listed in the compact profile (GRAPHSVC_MCP_PROFILE=compact, the default).
    compact: bool = False

    @property
    def name(self) -> str:
        return _snake(self.field)

    @property
    def read_only_hint(self) -> bool:
        """Whether calling the tool changes nothing."""
        return self.read_only or not self.mutation

    @property
    def idempotent_hint(self) -> bool:
        """Whether calling the tool twice does what calling it once does."""
        return self.idempotent or not self.mutation


TOOLS: tuple[ToolDef, ...] = (
    ToolDef(
        "search",
        False,
        _showing(Service.search, SearchRequest, shown_in_search),
        compact=True,
        description="Find remembered atoms relevant to a question, ranked. Call it "
        "before answering from memory; `cursor` gives the next page.",
        arguments=(("query", "What to look for, in words."),),
    ),
    ToolDef(
        "read",
        False,
        _read,
        compact=True,
        description="Memory as text to put in context: the most relevant atoms and what "
        "they need, within memoryTokenBudget tokens.",
        arguments=(
            ("query", "What to read about, in words."),
            ("memoryTokenBudget", "The most tokens the text may take."),
        ),
    ),
    ToolDef(
        "remember",
        True,
        memory_tools.run_remember,
        compact=True,
        model=memory_tools.RememberArguments,
        capability="write",
        description="Store something worth keeping as a new atom. `about`: atoms from "
        "this session it concerns. What this session was shown is recorded as its "
        "source, so it is flagged stale when those atoms change.",
    ),
    ToolDef(
        "inspect",
        False,
        _showing(Service.inspect, InspectRequest, shown_in_inspect),
        compact=True,
        description="One atom and its linked neighbours; `stale` says whether what it "
        "was made from has changed since.",
    ),
    ToolDef(
        "entities",
        False,
        memory_tools.run_entities,
        compact=True,
        model=memory_tools.EntitiesArguments,
        description="People, places and things named in memory: `query` finds them "
        "by name, `key` lists the atoms naming one.",
    ),
    ToolDef(
        "status",
        False,
        memory_tools.run_status,
        compact=True,
        model=memory_tools.StatusArguments,
        description="Whether memory is up: version, database, indexing lag, model.",
    ),
    ToolDef(
        "atom",
        False,
        memory_tools.run_atom,
        model=memory_tools.AtomArguments,
        description="One atom by id: its head, a revision, or as it stood at `asOf`.",
    ),
    ToolDef(
        "changes",
        False,
        memory_tools.run_changes,
        model=memory_tools.ChangesArguments,
        description="What was written, revised, retired or purged since an instant "
        "(`since`) or since the last page (`after` = its `cursor`), oldest first.",
    ),
    ToolDef(
        "lineage",
        False,
        _lineage,
        description="Where an atom came from (atomisation) and what it links, as nodes and edges.",
    ),
    ToolDef(
        "write",
        True,
        _write,
        description="Batches of create/revise/retire. A link's target is {atomId, rev} "
        "or {local: <change id of this batch>}; revise and retire name the head they "
        "saw (`target`), else CAS_CONFLICT. The same options.idempotencyKey with the "
        "same batch answers the first outcome again.",
    ),
    ToolDef(
        "recordUse",
        True,
        _record_use,
        description="Report that an answer built from a read was accepted: manifest "
        "is {id: manifestId}; the same eventId again changes nothing.",
        arguments=(("eventId", "Your id of the accepted answer."),),
    ),
    ToolDef(
        "resetUsage",
        True,
        _reset_usage,
        destructive=True,
        idempotent=True,
    ),
    ToolDef("atomise", True, _answer(Service.atomise, retries=_OPERATOR_RETRIES)),
    ToolDef("setNamespacePolicy", True, _answer(Service.set_namespace_policy), idempotent=True),
    ToolDef("exportForensicBundle", True, _answer(Service.export_forensic_bundle), read_only=True),
    ToolDef("purge", True, _answer(Service.purge), destructive=True, idempotent=True),
)

# The capabilities of operator tools: listed by capability in every profile.
_OPERATOR = frozenset({"atomise", "export", "purge"})


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

    def run(self, call: Call) -> dict[str, Any]:
        """Validate the call's arguments and run the operation for its binding.

        Raises:
            GraphsvcError: the operation's own errors, with their codes.
        """
        return self.definition.run(call, self.parse(call.raw))


def build_tools(schema: GraphQLSchema, service: Service) -> dict[str, Tool]:
    """Every tool of :data:`TOOLS`, by name: a GraphQL field's from the built schema."""
    batch_limits = service.write_deps().limits
    out: dict[str, Tool] = {}
    for d in TOOLS:
        if d.model is not None:
            out[d.name] = Tool(d.name, d.capability, d.description, d.model, d)
            continue
        root = schema.mutation_type if d.mutation else schema.query_type
        assert root is not None
        field = root.fields[d.field]
        out[d.name] = Tool(
            name=d.name,
            capability=required_capability(d.field, mutation=d.mutation),
            description=d.description or _plain(field.description or ""),
            arguments=arguments_model(d.name, field, dict(d.arguments)),
            definition=d,
            batch_limits=batch_limits if d.field == "write" else None,
            max_json_depth=service.settings.graphql.max_json_depth,
        )
    return out


def listed(tool: Tool, profile: str, can: frozenset[str]) -> bool:
    """Whether ``tools/list`` shows ``tool`` to a token with capabilities ``can``:
    a tool of the profile, or an operator tool the token may call."""
    if tool.capability not in can:
        return False
    return profile == "full" or tool.definition.compact or tool.capability in _OPERATOR


def _plain(description: str) -> str:
    """A GraphQL field's description without its SPEC references ("(SPEC §7)",
    "(ATM-8)"), which mean nothing to a model."""
    text = re.sub(r"\s*\((?:SPEC )?(?:§\d+|[A-Z]{2,4}-\d+)(?:[,;] ?[^)]*)?\)", "", description)
    return text.strip()


def _describe(exc: ValidationError) -> str:
    """The first few validation errors as ``path: message`` (never the input value)."""
    parts = [
        f"{'.'.join(str(p)[:64] for p in err['loc']) or 'arguments'}: {err['msg']}"
        for err in exc.errors(include_input=False)[:5]
    ]
    more = exc.error_count() - 5
    return "invalid arguments: " + "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")
