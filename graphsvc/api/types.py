"""Strawberry types of SPEC API-6 (names and shapes fixed; extras allowed). No logic."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, cast

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from graphsvc.api.enums import ChangeOp, Direction, LinkAt, RangeUnit
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


@strawberry.input(description="An issued revision: atomId and rev.")
class AtomRefInput:
    atom_id: strawberry.ID
    rev: int


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


@strawberry.type(description="An issued revision: atomId and rev.")
class AtomRef:
    atom_id: strawberry.ID = strawberry.field(description="The atom.")
    rev: int = strawberry.field(description="The revision number.")


@strawberry.type(description="A link of an AtomView; the safe form of LNK-2 when unavailable.")
class AtomLink:
    role: str = strawberry.field(description="The role (user data; never implies meaning, CORE-4).")
    unavailable: bool = strawberry.field(
        description="The target is purged or not permitted: no target is shown."
    )
    required: bool = strawberry.field(
        description="The target must be presented with this revision (RD-2)."
    )
    at: LinkAt = strawberry.field(description="LOGICAL follows the head; OBSERVED is pinned.")
    order_key: str | None = strawberry.field(description="Caller-given order key.")
    target: AtomRef | None = strawberry.field(
        description="The target revision; null when unavailable. (Typed walk: `atom`.)"
    )


@strawberry.type(name="AtomView", description="The public form of one revision (SPEC §2).")
class AtomViewType:
    atom_id: strawberry.ID = strawberry.field(description="The atom.")
    rev: int = strawberry.field(description="The revision number.")
    state: str = strawberry.field(description="active, retired or archived.")
    text: str = strawberry.field(description="The body.")
    head: bool = strawberry.field(description="This revision is the atom's head.")
    links: list[AtomLink] = strawberry.field(description="The links, in stored order.")
    sources: JSON = strawberry.field(
        description="The source citations as JSON (typed: Revision.citations)."
    )
    atom_of: strawberry.ID | None = strawberry.field(
        description="The atom this one was atomised from (§11)."
    )
    atomised_into: int | None = strawberry.field(
        description="How many atoms this revision was atomised into."
    )
    archived_at: str | None = strawberry.field(description="When this revision was archived (§11).")


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


@strawberry.type(description="One ranked atom of a search.")
class SearchHit:
    atom: AtomViewType = strawberry.field(description="The atom's head.")
    score: float = strawberry.field(description="Relative score within this evaluation (ACT-4).")
    score_breakdown: JSON = strawberry.field(
        description="How the score was made, as JSON (typed: breakdown)."
    )

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


@strawberry.type(description="A page of a search.")
class SearchResult:
    hits: list[SearchHit] = strawberry.field(description="The ranked hits of this page.")
    diagnostics: JSON = strawberry.field(
        description="acquisition, validation, evaluation, selection (CUR-3)."
    )
    cursor: str | None = strawberry.field(
        description="The next page's cursor; null on the last page."
    )

    @strawberry.field(description="Typed sibling of diagnostics: one entry per part and key.")
    def diagnostics_list(self) -> list[DiagnosticEntry]:
        return diagnostics_list(self.diagnostics)


@strawberry.type(description="What a read selected under its budget.")
class Selection:
    baseline_complete: bool = strawberry.field(
        description="Every root's required closure was presented."
    )
    coverage_certified: bool = strawberry.field(
        description="The selection is certified against the candidates."
    )
    tokens: int = strawberry.field(description="Tokens of the read text.")
    budget: int = strawberry.field(description="The token budget asked for.")


@strawberry.type(description="One presented revision of a read.")
class ReadItem:
    ref: AtomRef = strawberry.field(description="The presented revision.")
    role: str = strawberry.field(description="root or required.")
    score: float | None = strawberry.field(
        description="The root's score; null for required bodies."
    )
    blocked: bool = strawberry.field(description="The root is blocked (RD-2).")


@strawberry.type(description="A token-budgeted, dependency-complete read (SPEC §8).")
class ReadResult:
    text: str = strawberry.field(description="The read text (formatVersion 2 JSON).")
    format_version: int = strawberry.field(description="The text's format version.")
    items: list[ReadItem] = strawberry.field(description="The presented revisions in order.")
    selection: Selection = strawberry.field(description="What was selected under the budget.")
    manifest: JSON = strawberry.field(
        description="The observation record as JSON (typed: manifestInfo)."
    )
    diagnostics: JSON = strawberry.field(
        description="acquisition, validation, evaluation, selection (CUR-3)."
    )
    cursor: str | None = strawberry.field(
        description="The next page's cursor; null on the last page."
    )

    @strawberry.field(description="Typed sibling of manifest (same values).")
    def manifest_info(self) -> ManifestInfo:
        return manifest_info(self.manifest)

    @strawberry.field(description="Typed sibling of diagnostics: one entry per part and key.")
    def diagnostics_list(self) -> list[DiagnosticEntry]:
        return diagnostics_list(self.diagnostics)
