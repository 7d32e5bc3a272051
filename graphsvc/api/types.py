"""Strawberry types of SPEC API-6 (names and shapes fixed; extras allowed). No logic."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, cast

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from graphsvc.api.graph_siblings import (
    DiagnosticEntry,
    ManifestInfo,
    ScoreBreakdown,
    diagnostics_list,
    manifest_info,
    score_breakdown,
)
from graphsvc.core.write_models import AtomView

if TYPE_CHECKING:
    from graphsvc.api.graph_types import Revision

__all__ = [
    "AtomLink",
    "AtomRef",
    "AtomRefInput",
    "AtomViewType",
    "ChangeInput",
    "ChangeOp",
    "ChangeResult",
    "ContentInput",
    "Direction",
    "IndexingState",
    "LinkAt",
    "LinkInput",
    "LinkTargetInput",
    "RangeInput",
    "RangeUnit",
    "ReadItem",
    "ReadResult",
    "SearchHit",
    "SearchResult",
    "Selection",
    "SourceCitationInput",
    "WriteOptionsInput",
    "WriteOutcomeType",
    "atom_view",
    "input_to_json",
]


@strawberry.enum
class LinkAt(Enum):
    LOGICAL = "logical"
    OBSERVED = "observed"


@strawberry.enum
class Direction(Enum):
    INCOMING = "incoming"
    OUTGOING = "outgoing"
    BOTH = "both"


@strawberry.enum
class ChangeOp(Enum):
    CREATE = "create"
    REVISE = "revise"
    RETIRE = "retire"


@strawberry.enum
class RangeUnit(Enum):
    BYTE = "byte"
    CHAR = "char"
    LINE = "line"


@strawberry.input
class AtomRefInput:
    atom_id: strawberry.ID
    rev: int


@strawberry.input
class LinkTargetInput:
    ref: AtomRefInput | None = None
    local: str | None = None
    at: LinkAt | None = None
    required: bool | None = None
    order_key: str | None = None


@strawberry.input
class LinkInput:
    role: str
    target: LinkTargetInput


@strawberry.input
class RangeInput:
    start: int
    end: int
    unit: RangeUnit


@strawberry.input
class SourceCitationInput:
    uri: str
    version: str | None = None
    digest: str | None = None
    range: RangeInput | None = None


@strawberry.input
class ContentInput:
    text: str
    links: list[LinkInput]


@strawberry.input
class ChangeInput:
    id: str
    op: ChangeOp
    target: AtomRefInput | None = None
    content: ContentInput | None = None
    sources: list[SourceCitationInput] | None = None
    input: str | None = None


@strawberry.input
class WriteOptionsInput:
    idempotency_key: str | None = None


@strawberry.type
class AtomRef:
    atom_id: strawberry.ID
    rev: int


@strawberry.type
class AtomLink:
    role: str
    unavailable: bool
    required: bool
    at: LinkAt
    order_key: str | None
    target: AtomRef | None


@strawberry.type(name="AtomView")
class AtomViewType:
    atom_id: strawberry.ID
    rev: int
    state: str
    text: str
    head: bool
    links: list[AtomLink]
    sources: JSON
    atom_of: strawberry.ID | None
    atomised_into: int | None
    archived_at: str | None


@strawberry.type
class ChangeResult:
    id: str
    atom: AtomViewType


@strawberry.enum(description="Whether a write's new heads are already searchable (WR-8).")
class IndexingState(Enum):
    COMPLETE = strawberry.enum_value("complete", description="Embeddings/fulltext are queryable.")
    PENDING = strawberry.enum_value("pending", description="They will be shortly.")


@strawberry.type(name="WriteOutcome")
class WriteOutcomeType:
    operation_id: strawberry.ID
    repeated: bool
    indexing: str
    changes: list[ChangeResult]
    atomise_mode: str | None = None
    atomise_outcome: str | None = None

    @strawberry.field(description="Typed sibling of indexing (an enum, not a string).")
    def indexing_state(self) -> IndexingState:
        return IndexingState(self.indexing)


def atom_view(view: AtomView) -> AtomViewType:
    """Core AtomView → GraphQL AtomView."""
    return AtomViewType(
        atom_id=strawberry.ID(view.atom_id),
        rev=view.rev,
        state=view.state,
        text=view.text,
        head=view.head,
        links=[
            AtomLink(
                role=link.role,
                unavailable=link.unavailable,
                required=link.required,
                at=LinkAt(link.at),
                order_key=link.order_key,
                target=None
                if link.unavailable or link.target is None
                else AtomRef(atom_id=strawberry.ID(link.target.atom_id), rev=link.target.rev),
            )
            for link in view.links
        ],
        sources=cast(JSON, list(view.sources)),
        atom_of=strawberry.ID(view.atom_of) if view.atom_of else None,
        atomised_into=view.atomised_into,
        archived_at=view.archived_at,
    )


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
class SearchHit:
    atom: AtomViewType
    score: float
    score_breakdown: JSON

    @strawberry.field(
        description="The hit's own text matches the query weakly: its match signal is "
        "below 0.2 of the best possible match (1.0). Scores are relative, so a "
        "gibberish query still ranks hits; this says they hardly match."
    )
    def weak(self) -> bool:
        from graphsvc.core.match_floor import is_weak_match

        return is_weak_match(cast(dict[str, Any], self.score_breakdown))

    @strawberry.field(description="Typed sibling of scoreBreakdown (same values).")
    def breakdown(self) -> ScoreBreakdown:
        return score_breakdown(self.score_breakdown)

    @strawberry.field(
        description="The hit's revision in the typed graph: walk on to its links, "
        "their targets and citations."
    )
    async def revision(
        self, info: Info
    ) -> Annotated[Revision, strawberry.lazy("graphsvc.api.graph_types")] | None:
        from graphsvc.api.graph_types import revision_of

        return await revision_of(info, str(self.atom.atom_id), self.atom.rev)


@strawberry.type
class SearchResult:
    hits: list[SearchHit]
    diagnostics: JSON
    cursor: str | None

    @strawberry.field(description="Typed sibling of diagnostics: one entry per part and key.")
    def diagnostics_list(self) -> list[DiagnosticEntry]:
        return diagnostics_list(self.diagnostics)


@strawberry.type
class Selection:
    baseline_complete: bool
    coverage_certified: bool
    tokens: int
    budget: int


@strawberry.type
class ReadItem:
    ref: AtomRef
    role: str
    score: float | None
    blocked: bool


@strawberry.type
class ReadResult:
    text: str
    format_version: int
    items: list[ReadItem]
    selection: Selection
    manifest: JSON
    diagnostics: JSON
    cursor: str | None

    @strawberry.field(description="Typed sibling of manifest (same values).")
    def manifest_info(self) -> ManifestInfo:
        return manifest_info(self.manifest)

    @strawberry.field(description="Typed sibling of diagnostics: one entry per part and key.")
    def diagnostics_list(self) -> list[DiagnosticEntry]:
        return diagnostics_list(self.diagnostics)
