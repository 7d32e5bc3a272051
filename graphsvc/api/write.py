"""GraphQL ``write`` (SPEC §2) and ``observe`` (SPEC §3, the InputToken a write
names): the input types of a batch, ``WriteOutcome``, and the resolvers, one call into
the Service each, run in a worker thread because they block on Neo4j. The batch is
checked by :func:`graphsvc.inputs.models.parse_changes` (the same as MCP's).
"""

from __future__ import annotations

import asyncio
from enum import Enum
from typing import Any

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from graphsvc.api.context import binding_of, service_of
from graphsvc.api.enums import ChangeOp, LinkAt, RangeUnit
from graphsvc.api.types import AtomRefInput, AtomViewType, atom_view
from graphsvc.inputs.models import parse_changes, parse_host_input

__all__ = [
    "ChangeInput",
    "ChangeResult",
    "ContentInput",
    "IndexingState",
    "LinkInput",
    "LinkTargetInput",
    "RangeInput",
    "SourceCitationInput",
    "WriteMutation",
    "WriteOptionsInput",
    "WriteOutcomeType",
    "input_to_json",
]


@strawberry.input(
    description="A link target: `ref` (an issued revision) or `local` (a change of "
    "this batch), exactly one, with at/required/orderKey."
)
class LinkTargetInput:
    ref: AtomRefInput | None = None
    local: str | None = None
    at: LinkAt | None = None
    required: bool | None = None
    order_key: str | None = None


@strawberry.input(description="A typed link: a role (user data) and a target.")
class LinkInput:
    role: str
    target: LinkTargetInput


@strawberry.input(description="A range of a source in bytes, characters or lines (end exclusive).")
class RangeInput:
    start: int
    end: int
    unit: RangeUnit


@strawberry.input(description="A cited source: uri, optional version, digest and range.")
class SourceCitationInput:
    uri: str
    version: str | None = None
    digest: str | None = None
    range: RangeInput | None = None


@strawberry.input(description="The body and the complete list of links of a new revision.")
class ContentInput:
    text: str
    links: list[LinkInput]


@strawberry.input(description="One change of a write batch: create, revise or retire.")
class ChangeInput:
    id: str
    op: ChangeOp
    target: AtomRefInput | None = None
    content: ContentInput | None = None
    sources: list[SourceCitationInput] | None = None
    input: str | None = None


@strawberry.input(description="Options of a write.")
class WriteOptionsInput:
    idempotency_key: str | None = None


@strawberry.type(description="The committed view of one change of a write.")
class ChangeResult:
    id: str = strawberry.field(description="The change id of the batch.")
    atom: AtomViewType = strawberry.field(description="The committed revision.")


@strawberry.enum(description="Whether a write's new heads are already searchable (WR-8).")
class IndexingState(Enum):
    COMPLETE = strawberry.enum_value("complete", description="Embeddings/fulltext are queryable.")
    PENDING = strawberry.enum_value("pending", description="They will be shortly.")


@strawberry.type(name="WriteOutcome", description="The result of a write (WR-8).")
class WriteOutcomeType:
    operation_id: strawberry.ID = strawberry.field(
        description="The operation (the same on an idempotent replay)."
    )
    repeated: bool = strawberry.field(
        description="An idempotent replay: nothing was committed again."
    )
    indexing: str = strawberry.field(
        description="complete or pending: whether the new heads are searchable yet."
    )
    changes: list[ChangeResult] = strawberry.field(
        description="Every change id with its committed view."
    )
    atomise_mode: str | None = strawberry.field(
        default=None, description="The namespace policy's atomisation mode, when it applied."
    )
    atomise_outcome: str | None = strawberry.field(
        default=None, description="What synchronous atomisation did, when it applied."
    )

    @strawberry.field(description="Typed sibling of indexing (an enum, not a string).")
    def indexing_state(self) -> IndexingState:
        return IndexingState(self.indexing)


_CAMEL = {
    "atom_id": "atomId",
    "order_key": "orderKey",
    "idempotency_key": "idempotencyKey",
}


def input_to_json(value: Any) -> Any:
    """A strawberry input object (tree) → plain JSON with the API's camelCase names."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, list):
        return [input_to_json(v) for v in value]
    if hasattr(value, "__strawberry_definition__"):
        out = {}
        for name, v in vars(value).items():
            if v is None or v is strawberry.UNSET:
                continue
            out[_CAMEL.get(name, name)] = input_to_json(v)
        return out
    return value


@strawberry.type
class WriteMutation:
    @strawberry.mutation(description="Commit a batch of changes atomically (SPEC §2).")
    async def write(
        self, info: Info, changes: list[ChangeInput], options: WriteOptionsInput | None = None
    ) -> WriteOutcomeType:
        binding = binding_of(info)
        parsed = parse_changes(input_to_json(changes))
        key = options.idempotency_key if options else None
        outcome = await asyncio.to_thread(service_of(info).write, binding, parsed, key)
        return WriteOutcomeType(
            operation_id=strawberry.ID(outcome.operation_id),
            repeated=outcome.repeated,
            indexing=outcome.indexing,
            changes=[
                ChangeResult(id=cid, atom=atom_view(view)) for cid, view in outcome.changes.items()
            ],
            atomise_mode=(outcome.extra or {}).get("atomiseMode"),
            atomise_outcome=(outcome.extra or {}).get("atomiseOutcome"),
        )

    @strawberry.mutation(description="Record a host's inputs; returns an opaque InputToken.")
    async def observe(self, info: Info, input: JSON) -> str:
        binding = binding_of(info)
        host_input = parse_host_input(input)
        return await asyncio.to_thread(service_of(info).observe, binding, host_input)
