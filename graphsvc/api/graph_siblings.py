"""Typed siblings of today's JSON fields whose shape is known (the JSON fields stay).

- ``SearchHit.breakdown: ScoreBreakdown`` beside ``scoreBreakdown: JSON``;
- ``ReadResult.manifestInfo: ManifestInfo`` beside ``manifest: JSON``;
- ``exportForensicBundleTyped: ForensicBundle!`` beside ``exportForensicBundle: JSON!``;
- ``diagnosticsList: [DiagnosticEntry!]!`` beside ``diagnostics: JSON`` on
  SearchResult, ReadResult and InspectResult: one entry per key of each of the
  four parts of CUR-3 (acquisition, validation, evaluation, selection), whose
  value stays JSON because its shape differs per key;
- on InspectResult, ``receiptInfo: InspectReceipt!`` beside ``receipt``,
  ``readEligibilityInfo: ReadEligibility!`` beside ``readEligibility`` and
  ``usageInfo: UsageInfo`` beside ``usage``.

Each sibling is computed from the same document as its JSON field, so the two
never disagree.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, cast

import strawberry
from strawberry.scalars import JSON

if TYPE_CHECKING:
    from graphsvc.api.types import AtomRef

__all__ = [
    "DiagnosticEntry",
    "DiagnosticSection",
    "ForensicBundle",
    "InspectReceipt",
    "ManifestInfo",
    "ManifestRange",
    "ReadEligibility",
    "ScoreBreakdown",
    "UsageInfo",
    "UsageState",
    "WatchedQuery",
    "diagnostics_list",
    "inspect_receipt",
    "manifest_info",
    "read_eligibility",
    "score_breakdown",
    "usage_info",
]

_AtomRef = Annotated["AtomRef", strawberry.lazy("graphsvc.api.types")]


@strawberry.type(description="How one hit's score was made (SPEC §5, ACT-1…ACT-4).")
class ScoreBreakdown:
    match: float = strawberry.field(description="Match signal m = 0.8·semantic + 0.2·lexical.")
    semantic: float | None = strawberry.field(
        description="Cosine similarity of body and query embeddings; null when missing."
    )
    lexical: float | None = strawberry.field(
        description="Normalised fulltext score; null when missing."
    )
    usage: float = strawberry.field(description="AvailabilityModel value u (ACT-2).")
    usage_factor: float = strawberry.field(description="b / m: the usage factor applied.")
    base: float = strawberry.field(description="Base activation b (ACT-2).")
    propagated_share: float = strawberry.field(
        description="Part of the score that came over links and entities (ACT-3)."
    )
    entity_share: float = strawberry.field(
        description="Part of the score that came through entities (ENT-4, ENT-5); 0 "
        "with the entity index off."
    )
    candidate: bool = strawberry.field(description="The atom was matched, not only reached.")


@strawberry.type(description="A cited source range presented by a read.")
class ManifestRange:
    ref: str = strawberry.field(description="The presented revision, `atomId@rev`.")
    uri: str = strawberry.field(description="The source's URI.")
    version: str | None = strawberry.field(description="The source's version.")
    start: int = strawberry.field(description="First unit of the range.")
    end: int | None = strawberry.field(description="Unit after the last one.")
    unit: str | None = strawberry.field(description="byte, char or line.")


@strawberry.type(description="A query observation a read watches (MAN-1).")
class WatchedQuery:
    query: str = strawberry.field(description="The query text.")
    evaluated_at: float = strawberry.field(description="When it was evaluated (epoch s).")


@strawberry.type(
    description="The read's manifest (observation record, SPEC §9), typed. The JSON's "
    "generation and acknowledgement are null in a read's answer (observe, write and "
    "recordUse fill them later), so they have no field here."
)
class ManifestInfo:
    id: strawberry.ID = strawberry.field(description="Manifest id (for observe/recordUse).")
    contract_version: int = strawberry.field(description="Manifest contract version (2).")
    query: str | None = strawberry.field(description="The query text of the read.")
    evaluated_at: float | None = strawberry.field(description="Evaluation time (epoch s).")
    embedding_model: str | None = strawberry.field(description="The embedding model used.")
    digest: str | None = strawberry.field(description="sha256 of the presented text.")
    format_version: int | None = strawberry.field(description="The read text's format.")
    presented: list[_AtomRef] = strawberry.field(description="The presented revisions.")
    ranges: list[ManifestRange] = strawberry.field(description="Cited ranges presented.")
    watched_heads: list[_AtomRef] = strawberry.field(
        description="Heads whose movement makes this read stale."
    )
    versions: list[str] = strawberry.field(
        description="The revisions acquisition touched, `atomId@rev` (acquisition.versions)."
    )
    watched_queries: list[WatchedQuery] = strawberry.field(
        description="Query observations whose currency the read depends on (watches.queries)."
    )


@strawberry.type(description="An exported forensic bundle (SIG-3): its bytes and what it holds.")
class ForensicBundle:
    bundle: str = strawberry.field(description="The bundle (a tar) as base64.")
    sha256: str = strawberry.field(description="SHA-256 of the bundle's bytes, hex.")
    size: int = strawberry.field(name="bytes", description="The bundle's size in bytes.")
    memories: int = strawberry.field(description="Memories (atoms of the lineage) it holds.")
    revisions: int = strawberry.field(description="Revisions in the bundle.")
    events: int = strawberry.field(description="Signed events (the subject's chain) in the bundle.")
    lineage: int = strawberry.field(description="Signed derives_from edges in the bundle.")
    keys: int = strawberry.field(description="Public keys in the bundle (to verify offline).")


@strawberry.enum(description="The four parts of diagnostics (CUR-3).")
class DiagnosticSection(Enum):
    ACQUISITION = strawberry.enum_value("acquisition", description="Candidates and snapshot.")
    VALIDATION = strawberry.enum_value("validation", description="Checks of the graph state.")
    EVALUATION = strawberry.enum_value("evaluation", description="The solve (scores).")
    SELECTION = strawberry.enum_value("selection", description="Closure, cost and packing.")
    OTHER = strawberry.enum_value("other", description="Any key outside the four parts.")


@strawberry.type(description="One diagnostics key of one part, its value as JSON.")
class DiagnosticEntry:
    section: DiagnosticSection = strawberry.field(description="The part it belongs to.")
    key: str = strawberry.field(description="The key within the part.")
    value: JSON | None = strawberry.field(description="The value (shape depends on the key).")


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def score_breakdown(doc: Any) -> ScoreBreakdown:
    """The typed form of a hit's ``scoreBreakdown`` JSON."""
    d = dict(doc or {})
    return ScoreBreakdown(
        match=float(d.get("match") or 0.0),
        semantic=_float(d.get("semantic")),
        lexical=_float(d.get("lexical")),
        usage=float(d.get("usage") or 0.0),
        usage_factor=float(d.get("usageFactor") or 1.0),
        base=float(d.get("base") or 0.0),
        propagated_share=float(d.get("propagatedShare") or 0.0),
        entity_share=float(d.get("entityShare") or 0.0),
        candidate=bool(d.get("candidate")),
    )


def _refs(items: Any) -> list[AtomRef]:
    from graphsvc.api.types import AtomRef

    return [AtomRef(atom_id=strawberry.ID(r["atomId"]), rev=int(r["rev"])) for r in items or []]


def manifest_info(doc: Any) -> ManifestInfo:
    """The typed form of a read's ``manifest`` JSON."""
    d = dict(doc or {})
    acq = d.get("acquisition") or {}
    pres = d.get("presentation") or {}
    watches = d.get("watches") or {}
    return ManifestInfo(
        id=strawberry.ID(str(d.get("id"))),
        contract_version=int(d.get("contractVersion") or 0),
        query=acq.get("query"),
        evaluated_at=_float(acq.get("evaluatedAt")),
        embedding_model=(acq.get("indexState") or {}).get("embeddingModel"),
        digest=pres.get("digest"),
        format_version=pres.get("formatVersion"),
        presented=_refs(pres.get("revisions")),
        ranges=[
            ManifestRange(
                ref=str(r["ref"]),
                uri=r["uri"],
                version=r.get("version"),
                start=int(r["start"]),
                end=r.get("end"),
                unit=r.get("unit"),
            )
            for r in pres.get("ranges") or []
        ],
        watched_heads=_refs(watches.get("heads")),
        versions=[str(v) for v in acq.get("versions") or []],
        watched_queries=[
            WatchedQuery(query=str(q["query"]), evaluated_at=float(q["evaluatedAt"]))
            for q in watches.get("queries") or []
        ],
    )


def diagnostics_list(doc: Any) -> list[DiagnosticEntry]:
    """Diagnostics JSON as entries, part by part (CUR-3 order), keys sorted."""
    d = dict(doc or {})
    known = [s.value for s in DiagnosticSection if s is not DiagnosticSection.OTHER]
    out: list[DiagnosticEntry] = []
    for part in known:
        section = DiagnosticSection(part)
        value = d.get(part)
        if isinstance(value, dict):
            out += [
                DiagnosticEntry(section=section, key=k, value=cast(JSON, value[k]))
                for k in sorted(value)
            ]
    for k in sorted(set(d) - set(known)):
        out.append(DiagnosticEntry(section=DiagnosticSection.OTHER, key=k, value=cast(JSON, d[k])))
    return out


@strawberry.type(description="A sealed receipt of what inspect showed (INS-2), with its facts.")
class InspectReceipt:
    receipt: str = strawberry.field(
        description="The sealed receipt (opaque; the server checks it)."
    )
    kind: str = strawberry.field(description="What was shown: inspect.")
    atom_id: strawberry.ID = strawberry.field(description="The shown atom.")
    rev: int = strawberry.field(description="The shown revision.")
    digest: str = strawberry.field(description="The shown body's digest.")
    evaluated_at: float = strawberry.field(description="When it was shown (epoch seconds).")
    expires_at: float = strawberry.field(description="When the receipt expires (epoch seconds).")


@strawberry.type(description="What showing the body does not prove (LNK-3).")
class ReadEligibility:
    eligible: bool = strawberry.field(description="A read could present this revision.")
    reasons: list[str] = strawberry.field(
        description="Why not: superseded, retired, archived, blocked."
    )
    eligible_with_include_archived: bool = strawberry.field(
        description="Archived is the only reason: a read with includeArchived presents it."
    )
    checked: str = strawberry.field(description="What was checked (one hop of required links).")


@strawberry.type(
    description="The usage state the availability model keeps for a revision (adaptiveUse, "
    "SPEC §5); every field null for a state that was reset to empty."
)
class UsageState:
    mass: float | None = strawberry.field(description="Decayed use mass M.")
    half_life_s: float | None = strawberry.field(description="Current half-life H, seconds.")
    last_at: float | None = strawberry.field(description="Time of the last use T (epoch s).")
    uses: int | None = strawberry.field(description="Uses recorded N.")


@strawberry.type(description="The caller's usage state of one revision and its value now (AV-3).")
class UsageInfo:
    model_id: str = strawberry.field(description="The availability model (adaptiveUse).")
    policy: str = strawberry.field(description="The caller's usage policy.")
    state: UsageState = strawberry.field(description="The stored state.")
    value: float = strawberry.field(description="The model's value u at evaluatedAt.")
    evaluated_at: float = strawberry.field(description="When it was evaluated (epoch s).")


def inspect_receipt(doc: Any) -> InspectReceipt:
    """The typed form of inspect's ``receipt`` JSON."""
    d = dict(doc)
    return InspectReceipt(
        receipt=str(d["receipt"]),
        kind=str(d["kind"]),
        atom_id=strawberry.ID(str(d["atomId"])),
        rev=int(d["rev"]),
        digest=str(d["digest"]),
        evaluated_at=float(d["evaluatedAt"]),
        expires_at=float(d["expiresAt"]),
    )


def read_eligibility(doc: Any) -> ReadEligibility:
    """The typed form of inspect's ``readEligibility`` JSON."""
    d = dict(doc)
    return ReadEligibility(
        eligible=bool(d["eligible"]),
        reasons=[str(r) for r in d["reasons"]],
        eligible_with_include_archived=bool(d["eligibleWithIncludeArchived"]),
        checked=str(d["checked"]),
    )


def usage_info(doc: Any) -> UsageInfo | None:
    """The typed form of inspect's ``usage`` JSON (null when the revision was never used)."""
    if doc is None:
        return None
    d = dict(doc)
    state = dict(d.get("state") or {})
    uses = state.get("uses")
    return UsageInfo(
        model_id=str(d["modelId"]),
        policy=str(d["policy"]),
        state=UsageState(
            mass=_float(state.get("mass")),
            half_life_s=_float(state.get("halfLifeS")),
            last_at=_float(state.get("lastAt")),
            uses=None if uses is None else int(uses),
        ),
        value=float(d["value"]),
        evaluated_at=float(d["evaluatedAt"]),
    )
