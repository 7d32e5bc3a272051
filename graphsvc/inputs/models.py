"""Pydantic models of the caller's JSON, validated once at the edge (GraphQL, CLI).

``parse_changes`` and ``parse_host_input`` turn raw JSON-like data into core
models, mapping every shape error to INVALID_INPUT with the offending path.
Missing and empty stay distinct (WR-2): a missing ``links``/``sources`` is None.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from graphsvc.core.write_models import AtomRef, Change, Citation, LinkSpec, Range
from graphsvc.errors import InvalidInputError

__all__ = ["HostInputIn", "parse_changes", "parse_host_input"]

_Strict = ConfigDict(extra="forbid", populate_by_name=True, str_max_length=2_200_000)


class AtomRefIn(BaseModel):
    model_config = _Strict
    atom_id: str = Field(alias="atomId", min_length=1, max_length=256)
    rev: int = Field(ge=1)

    def core(self) -> AtomRef:
        return AtomRef(self.atom_id, self.rev)


class RangeIn(BaseModel):
    model_config = _Strict
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    unit: Literal["byte", "char", "line"]


class SourceIn(BaseModel):
    model_config = _Strict
    uri: str = Field(min_length=1, max_length=4096)
    version: str | None = Field(default=None, max_length=256)
    digest: str | None = Field(default=None, max_length=256)
    range: RangeIn | None = None

    def core(self) -> Citation:
        r = self.range
        return Citation(
            uri=self.uri,
            version=self.version,
            digest=self.digest,
            range=Range(r.start, r.end, r.unit) if r else None,
        )


class LinkTargetIn(BaseModel):
    model_config = _Strict
    ref: AtomRefIn | None = None
    local: str | None = Field(default=None, min_length=1, max_length=256)
    at: Literal["logical", "observed"] | None = None
    required: bool | None = None
    order_key: str | None = Field(default=None, alias="orderKey", max_length=256)
    # A bare AtomRef ({atomId, rev}) is accepted as a target too (SPEC LinkTarget).
    atom_id: str | None = Field(default=None, alias="atomId", min_length=1, max_length=256)
    rev: int | None = Field(default=None, ge=1)

    @field_validator("at", mode="before")
    @classmethod
    def _either_case(cls, value: object) -> object:
        # GraphQL's LinkAt enum spells OBSERVED/LOGICAL, the SPEC's JSON observed/logical;
        # a changes file pasted from one or the other means the same link.
        return value.lower() if isinstance(value, str) else value


class LinkIn(BaseModel):
    model_config = _Strict
    role: str = Field(min_length=1, max_length=256)
    target: LinkTargetIn

    def core(self) -> LinkSpec:
        t = self.target
        ref = t.ref.core() if t.ref else None
        if t.atom_id is not None or t.rev is not None:
            if ref is not None or t.atom_id is None or t.rev is None:
                raise InvalidInputError("a link target is {ref}, {local} or a bare AtomRef")
            ref = AtomRef(t.atom_id, t.rev)
        if (ref is None) == (t.local is None):
            raise InvalidInputError("a link target needs exactly one of ref / local")
        return LinkSpec(
            role=self.role,
            ref=ref,
            local=t.local,
            at=t.at or "observed",
            required=bool(t.required),
            order_key=t.order_key,
        )


class ContentIn(BaseModel):
    model_config = _Strict
    text: str
    links: list[LinkIn] | None = Field(default=None, max_length=100_000)


class ChangeIn(BaseModel):
    model_config = _Strict
    id: str = Field(min_length=1, max_length=256)
    op: Literal["create", "revise", "retire"]
    target: AtomRefIn | None = None
    content: ContentIn | None = None
    sources: list[SourceIn] | None = Field(default=None, max_length=100_000)
    input: str | None = Field(default=None, max_length=16_384)

    @field_validator("op", mode="before")
    @classmethod
    def _lower(cls, v: Any) -> Any:
        return v.lower() if isinstance(v, str) else v

    def core(self) -> Change:
        content = self.content
        return Change(
            id=self.id,
            op=self.op,
            target=self.target.core() if self.target else None,
            text=content.text if content else None,
            links=tuple(link.core() for link in content.links)
            if content and content.links is not None
            else None,
            sources=tuple(s.core() for s in self.sources) if self.sources is not None else None,
            input=self.input,
        )


class _Changes(BaseModel):
    model_config = _Strict
    changes: list[ChangeIn] = Field(max_length=100_000)


def parse_changes(raw: Any) -> list[Change]:
    """Parse ``[ChangeInput]`` (or ``{"changes": [...]}``) into core Changes.

    Raises:
        InvalidInputError: the JSON does not have the shape of SPEC §2.
    """
    if isinstance(raw, dict) and "changes" in raw:
        raw = raw["changes"]
    try:
        parsed = _Changes.model_validate({"changes": raw})
    except ValidationError as exc:
        change_id = _offending_change(exc, raw)
        if change_id is None:
            raise InvalidInputError(_describe(exc)) from exc
        raise InvalidInputError(
            f"change {change_id!r}: {_describe(exc)}", details={"changeId": change_id}
        ) from exc
    out = []
    for change in parsed.changes:
        if change.op == "retire" and change.content is not None:
            raise InvalidInputError(
                f"change {change.id!r}: retire takes no content", details={"changeId": change.id}
            )
        try:
            out.append(change.core())
        except InvalidInputError as exc:
            raise InvalidInputError(
                f"change {change.id!r}: {exc.message}", details={"changeId": change.id}
            ) from exc
    return out


_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


class HostInputIn(BaseModel):
    """``observe``'s argument (SPEC §3, API-7)."""

    model_config = _Strict
    presentations: list[str] = Field(default_factory=list, max_length=1024)
    sources: list[SourceIn] = Field(default_factory=list, max_length=1024)
    inherit: list[str] = Field(default_factory=list, max_length=256)
    basis: list[AtomRefIn] = Field(default_factory=list, max_length=4096)
    watches: list[AtomRefIn] = Field(default_factory=list, max_length=4096)
    payload_digest: str = Field(alias="payloadDigest")

    @field_validator("payload_digest")
    @classmethod
    def _digest(cls, v: str) -> str:
        if not _DIGEST.match(v):
            raise ValueError("payloadDigest must be 'sha256:' + 64 lowercase hex digits")
        return v


def parse_host_input(raw: Any) -> HostInputIn:
    """Validate ``observe``'s JSON.

    Raises:
        InvalidInputError: the JSON does not have the HostInput shape.
    """
    try:
        return HostInputIn.model_validate(raw)
    except ValidationError as exc:
        raise InvalidInputError(_describe(exc)) from exc


def _offending_change(exc: ValidationError, raw: Any) -> str | None:
    """The ``id`` of the change the first validation error is in, when it has one."""
    loc = exc.errors()[0]["loc"]
    if len(loc) < 2 or loc[0] != "changes" or not isinstance(loc[1], int):
        return None
    if not isinstance(raw, list) or not 0 <= loc[1] < len(raw):
        return None
    item = raw[loc[1]]
    change_id = item.get("id") if isinstance(item, dict) else None
    return change_id if isinstance(change_id, str) and 0 < len(change_id) <= 256 else None


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err["loc"])
        parts.append(f"{loc}: {err['msg']}")
    more = exc.error_count() - 5
    return "invalid input: " + "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")
