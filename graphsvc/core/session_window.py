"""What an MCP session showed its model (SPEC §17, MCP-1…MCP-3), as pure values.

graphsvc's MCP server is the host of the model that calls its tools (TOK-4): it
keeps, per session, what it presented, and declares all of it when the session
writes. A session's window is a list of :class:`Shown` entries, most recent first,
bounded; :func:`merged` adds a call's presentations to it and :func:`declared`
turns it into the inputs of the session's InputToken:

- ``presentations``: the manifests of the session's reads;
- ``basis``: every other revision the session was shown (search hits, inspected
  atoms and their neighbours, the revisions a read presented);
- ``watches``: those of them that were heads when shown, so a later revision of one
  makes what the session wrote stale (LNK-1, MCP-3).

The window over-approximates (everything in it is declared, whether the model used
it or not) and never under-approximates within its bound (MCP-3, TOK-7).
An entry is stored as one short string (:meth:`Shown.key`), so that the window is
one list property of one node.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from graphsvc.core.canonical import canonical_cbor
from graphsvc.core.write_models import AtomRef

__all__ = [
    "Declared",
    "SessionToken",
    "Shown",
    "arguments_digest",
    "declared",
    "merged",
    "shown_in_inspect",
    "shown_in_read",
    "shown_in_search",
    "written",
]


@dataclass(frozen=True)
class Shown:
    """One presentation: a read's manifest, or a revision (and whether it was a head)."""

    kind: Literal["manifest", "revision", "written"]
    ident: str
    rev: int = 0
    head: bool = False

    def key(self) -> str:
        """The entry as stored: ``m:<manifestId>``, ``r:<h|o>:<rev>:<atomId>`` or
        ``w:h:<rev>:<atomId>``."""
        if self.kind == "manifest":
            return f"m:{self.ident}"
        prefix = "w" if self.kind == "written" else "r"
        return f"{prefix}:{'h' if self.head else 'o'}:{self.rev}:{self.ident}"

    @classmethod
    def parse(cls, key: str) -> Shown | None:
        """The entry of a stored key (None for a key this version does not know)."""
        if key.startswith("m:"):
            return cls("manifest", key[2:])
        parts = key.split(":", 3)
        if len(parts) == 4 and parts[0] in ("r", "w") and parts[2].isdigit():
            kind: Literal["revision", "written"] = "revision" if parts[0] == "r" else "written"
            return cls(kind, parts[3], int(parts[2]), parts[1] == "h")
        return None

    @property
    def ref(self) -> AtomRef:
        return AtomRef(self.ident, self.rev)


@dataclass(frozen=True)
class Declared:
    """A window as the inputs of an InputToken (SPEC §3 HostInput, MCP-2)."""

    presentations: tuple[str, ...]
    basis: tuple[AtomRef, ...]
    watches: tuple[AtomRef, ...]
    # What the session itself wrote: ``about`` may name it, it is no input (a
    # retried batch must declare the same inputs, IDEM-2; its own inputs are
    # declared already).
    written: tuple[AtomRef, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.presentations or self.basis)


@dataclass(frozen=True)
class SessionToken:
    """An InputToken a session's host issued, and what it declared."""

    token: str
    declared: Declared


def merged(new: Iterable[Shown], window: Iterable[str], bound: int) -> list[str]:
    """The stored window with ``new`` in front (most recent first), each entry once,
    at most ``bound`` entries. A revision shown as a head and later as not (or the
    reverse) keeps its latest form only."""
    out: list[str] = []
    seen: set[str] = set()
    for key in [s.key() for s in new] + list(window):
        parsed = Shown.parse(key)
        ident = key if parsed is None or parsed.kind == "manifest" else parsed.ref.key
        if ident in seen:
            continue
        seen.add(ident)
        out.append(key)
        if len(out) >= bound:
            break
    return out


def declared(window: Iterable[str]) -> Declared:
    """What a session declares for a change it makes (MCP-2)."""
    manifests: list[str] = []
    basis: list[AtomRef] = []
    watches: list[AtomRef] = []
    written: list[AtomRef] = []
    for key in window:
        shown = Shown.parse(key)
        if shown is None:
            continue
        if shown.kind == "manifest":
            manifests.append(shown.ident)
        elif shown.kind == "written":
            written.append(shown.ref)
        else:
            basis.append(shown.ref)
            if shown.head:
                watches.append(shown.ref)
    return Declared(tuple(manifests), tuple(basis), tuple(watches), tuple(written))


def arguments_digest(arguments: Mapping[str, Any]) -> str:
    """The canonical digest of a tool call's arguments as received (MCP-2's
    ``payloadDigest``): SHA-256 of their deterministic CBOR (RFC 8949 §4.2.1), so
    that key order and JSON spacing do not change it.

    Raises:
        InvalidInputError: a value CBOR cannot hold canonically (see
            :func:`graphsvc.core.canonical.canonical_cbor`).
    """
    return "sha256:" + hashlib.sha256(canonical_cbor(dict(arguments))).hexdigest()


def _atom(
    view: Mapping[str, Any], kind: Literal["revision", "written"] = "revision"
) -> Shown | None:
    atom_id, rev = view.get("atomId"), view.get("rev")
    if not isinstance(atom_id, str) or not isinstance(rev, int):
        return None
    return Shown(kind, atom_id, rev, bool(view.get("head")))


def shown_in_search(answer: Mapping[str, Any]) -> list[Shown]:
    """The revisions a search answer (its JSON form) showed, in rank order."""
    out = [_atom(hit.get("atom") or {}) for hit in answer.get("hits") or []]
    return [s for s in out if s is not None]


def shown_in_inspect(answer: Mapping[str, Any]) -> list[Shown]:
    """The inspected revision and the neighbours an inspect answer showed."""
    views = [answer.get("atom") or {}] + [
        n.get("atom") or {} for n in answer.get("neighbors") or []
    ]
    return [s for s in (_atom(v) for v in views) if s is not None]


def shown_in_read(manifest_id: str, items: Iterable[Mapping[str, Any]]) -> list[Shown]:
    """A read's manifest and the revisions it presented (each taken as a head when
    it was read as a root: a read presents current heads, and a required body that
    is an observed revision is not watched)."""
    out = [Shown("manifest", manifest_id)]
    for item in items:
        ref = item.get("ref") or {}
        atom_id, rev = ref.get("atomId"), ref.get("rev")
        if isinstance(atom_id, str) and isinstance(rev, int) and not item.get("blocked"):
            out.append(Shown("revision", atom_id, rev, item.get("role") == "root"))
    return out


def written(outcome: Mapping[str, Any]) -> list[Shown]:
    """The revisions a write answer (its JSON form) handed back to the model: what
    the session wrote, which later calls may name (``about``) but do not declare."""
    views = (outcome.get("changes") or {}).values()
    found = (_atom(v, "written") for v in views if isinstance(v, Mapping))
    return [s for s in found if s is not None]
