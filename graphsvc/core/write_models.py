"""The write contract as plain data (SPEC §2): changes, links, citations, views.

These are what the service and store pass around after the edge has parsed the
caller's JSON; they carry no behaviour beyond small derived properties.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "AtomLinkView",
    "AtomRef",
    "AtomView",
    "Change",
    "ChangeOp",
    "Citation",
    "LinkAt",
    "LinkSpec",
    "Range",
    "RangeUnit",
]

ChangeOp = Literal["create", "revise", "retire"]
LinkAt = Literal["logical", "observed"]
RangeUnit = Literal["byte", "char", "line"]


@dataclass(frozen=True, order=True)
class AtomRef:
    """``{atomId, rev}``: one issued revision."""

    atom_id: str
    rev: int

    @property
    def key(self) -> str:
        return f"{self.atom_id}@{self.rev}"

    def to_json(self) -> dict[str, Any]:
        return {"atomId": self.atom_id, "rev": self.rev}


@dataclass(frozen=True)
class Range:
    start: int
    end: int
    unit: RangeUnit

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "unit": self.unit}


@dataclass(frozen=True)
class Citation:
    """A source citation; ``verified`` is set by the store when it checked the range."""

    uri: str
    version: str | None = None
    digest: str | None = None
    range: Range | None = None
    verified: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"uri": self.uri}
        if self.version is not None:
            out["version"] = self.version
        if self.digest is not None:
            out["digest"] = self.digest
        if self.range is not None:
            out["range"] = self.range.to_json()
        return out


@dataclass(frozen=True)
class LinkSpec:
    """One link of a change: exactly one of ``ref`` / ``local`` is set."""

    role: str
    ref: AtomRef | None = None
    local: str | None = None
    at: LinkAt = "observed"
    required: bool = False
    order_key: str | None = None

    def to_json(self) -> dict[str, Any]:
        target: dict[str, Any] = {"at": self.at, "required": self.required}
        if self.ref is not None:
            target["ref"] = self.ref.to_json()
        if self.local is not None:
            target["local"] = self.local
        if self.order_key is not None:
            target["orderKey"] = self.order_key
        return {"role": self.role, "target": target}


@dataclass(frozen=True)
class Change:
    """One change of a batch. ``text``/``links``/``sources`` are None for retire."""

    id: str
    op: ChangeOp
    target: AtomRef | None = None
    text: str | None = None
    links: tuple[LinkSpec, ...] | None = None
    sources: tuple[Citation, ...] | None = None
    input: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The semantic content of the change (what the fingerprint hashes)."""
        out: dict[str, Any] = {"id": self.id, "op": self.op}
        if self.target is not None:
            out["target"] = self.target.to_json()
        if self.text is not None:
            out["content"] = {
                "text": self.text,
                "links": [link.to_json() for link in self.links or ()],
            }
        if self.sources is not None:
            out["sources"] = [s.to_json() for s in self.sources]
        return out


@dataclass(frozen=True)
class AtomLinkView:
    """A stored link in its public form; ``target`` is None when unavailable (LNK-2)."""

    role: str
    at: LinkAt
    required: bool
    order_key: str | None
    target: AtomRef | None
    unavailable: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "role": self.role,
            "unavailable": self.unavailable,
            "required": self.required,
            "at": self.at,
        }
        if self.order_key is not None:
            out["orderKey"] = self.order_key
        if not self.unavailable and self.target is not None:
            out["target"] = self.target.to_json()
        return out


@dataclass(frozen=True)
class AtomView:
    """One revision as the public operations show it (SPEC API-6 ``AtomView``)."""

    atom_id: str
    rev: int
    state: str
    text: str
    head: bool
    links: tuple[AtomLinkView, ...] = ()
    sources: tuple[dict[str, Any], ...] = ()
    atom_of: str | None = None
    atomised_into: int | None = None
    archived_at: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ref(self) -> AtomRef:
        return AtomRef(self.atom_id, self.rev)

    def to_json(self) -> dict[str, Any]:
        return {
            "atomId": self.atom_id,
            "rev": self.rev,
            "state": self.state,
            "text": self.text,
            "head": self.head,
            "links": [link.to_json() for link in self.links],
            "sources": list(self.sources),
            "atomOf": self.atom_of,
            "atomisedInto": self.atomised_into,
            "archivedAt": self.archived_at,
        }
