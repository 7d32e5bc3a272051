"""``inspect`` (SPEC §7): one revision, its one-hop neighbours, and what an auditor needs.

Decisions this module makes where the contract leaves room (each is tested):

- **Incoming links** come only from the *head* revision of each linking atom
  (whatever its state, so a retired head still shows as a neighbour with
  ``state: retired``): superseded revisions' links are history, not graph. An
  incoming observed link counts when it is pinned to the inspected revision; an
  incoming logical link counts only when the inspected revision is its atom's head,
  because a logical link binds to the head (INS-3). ``version`` decides how
  *outgoing* targets bind; an incoming neighbour is always the linking head.
- **Unavailable links** (LNK-2) never become neighbours (``Neighbor.atom`` is
  non-null and must not name the target). The root ``atom.links`` already shows
  them in the safe form; ``diagnostics.acquisition.unavailable`` lists the ones the
  direction/roles filter selected, as ``{direction, role, at, required, orderKey?,
  unavailable: true}`` — no id, no body, no reason.
- **Paging** (CUR-1/CUR-2): the first call freezes the neighbour list (refs and
  ``via`` only, never bodies) and the root facts as an ``:Evaluation``; later pages
  come from it, so a page never mixes two graph states. The cursor binds the atom,
  the requested rev, version, direction, roles, limit, range, the caller's binding,
  settings and index generation, and expires after ``cursor_lifetime_s``.
  At most ``max_limit`` neighbours are acquired (``truncated`` says so).
- **Range** (§15): ``rangeStart``/``rangeEnd`` are UTF-8 byte offsets into the body,
  end exclusive. A missing start is 0; a missing end is ``start + 4096`` (clamped
  to the body). At most 1 MiB may be asked for. The range *shrinks* to character
  boundaries — the start moves forward and the end backward to the nearest
  boundary — so no character is ever split; ``diagnostics.selection.range`` gives
  the requested and the returned offsets. Negative offsets, ``end < start``, a
  start past the body or a range over 1 MiB are INVALID_INPUT.
- **PURGE_PENDING** is answered while a purge of the subject is unfinished
  (LNK-6: public reads stop, and inspect is one).
- inspect changes no body, link or usage (CORE-2); it may store the frozen page
  list behind a cursor (auxiliary state).
- **asOf** (docs/time-travel.md): the root (default: the head as of the instant),
  its neighbours and their views are read as the graph stood then; the instant is
  part of the cursor's query hash. Watches, usage and entities describe now.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, cast

from graphsvc.core.availability import AdaptiveUseModel, checked_value
from graphsvc.core.binding import Binding
from graphsvc.core.mac import seal
from graphsvc.core.requests import InspectRequest
from graphsvc.core.write_models import AtomRef, AtomView
from graphsvc.errors import InvalidInputError, NotFoundError
from graphsvc.ops.acquisition import index_generation
from graphsvc.ops.cursors import CursorLimits, OpenedCursor, Pager, digest
from graphsvc.settings import fill
from graphsvc.store.connection import Database
from graphsvc.store.entity_views import entities_of_atoms
from graphsvc.store.inspect import (
    Neighborhood,
    NeighborQuery,
    RootFacts,
    RootQuery,
    load_first_page,
    load_root_and_neighbors,
)
from graphsvc.store.views import load_views, view_from_row

if TYPE_CHECKING:
    from graphsvc.settings import Settings

__all__ = [
    "DEFAULT_RANGE_BYTES",
    "MAX_RANGE_BYTES",
    "ByteRange",
    "Direction",
    "InspectLimits",
    "InspectResult",
    "Neighbor",
    "Version",
    "Via",
    "byte_range",
    "inspect",
]

Version = Literal["observed", "logical"]
Direction = Literal["incoming", "outgoing", "both"]

DEFAULT_RANGE_BYTES = 4096
MAX_RANGE_BYTES = 1024 * 1024
MAX_ROLES = 128
MAX_ROLE_CHARS = 256
_NOT_FOUND = "no such atom or revision"


@dataclass(frozen=True)
class Via:
    """One link between the root and a neighbour, seen from the root."""

    direction: Literal["incoming", "outgoing"]
    role: str
    at: Literal["logical", "observed"]
    required: bool
    order_key: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "direction": self.direction,
            "role": self.role,
            "at": self.at,
            "required": self.required,
        }
        if self.order_key is not None:
            out["orderKey"] = self.order_key
        return out


@dataclass(frozen=True)
class Neighbor:
    """A neighbour revision and every link that joins it to the root (INS-4)."""

    atom: AtomView
    via: tuple[Via, ...]

    def to_json(self) -> dict[str, Any]:
        return {"atom": self.atom.to_json(), "via": [v.to_json() for v in self.via]}


@dataclass(frozen=True)
class InspectResult:
    """The result of INS-2."""

    atom: AtomView
    neighbors: list[Neighbor]
    receipt: dict[str, Any]
    read_eligibility: dict[str, Any]
    stale: bool
    diagnostics: dict[str, Any]
    usage: dict[str, Any] | None
    cursor: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "atom": self.atom.to_json(),
            "neighbors": [n.to_json() for n in self.neighbors],
            "receipt": self.receipt,
            "readEligibility": self.read_eligibility,
            "stale": self.stale,
            "diagnostics": self.diagnostics,
            "usage": self.usage,
            "cursor": self.cursor,
        }


@dataclass(frozen=True)
class ByteRange:
    """The UTF-8 byte range asked for, the one returned (shrunk to character
    boundaries) and the body's size in bytes."""

    requested: tuple[int, int]
    returned: tuple[int, int]
    total_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "unit": "byte",
            "requested": {"start": self.requested[0], "end": self.requested[1]},
            "returned": {"start": self.returned[0], "end": self.returned[1]},
            "totalBytes": self.total_bytes,
        }


def byte_range(text: str, start: int | None, end: int | None) -> tuple[str, ByteRange]:
    """The part of ``text`` between UTF-8 byte offsets, shrunk to character boundaries.

    Args:
        text: the body.
        start: first byte (default 0).
        end: byte after the last (default ``start + DEFAULT_RANGE_BYTES``, clamped).

    Returns:
        The selected text and the range it covers.

    Raises:
        InvalidInputError: negative offsets, ``end < start``, a start past the body,
            or more than ``MAX_RANGE_BYTES`` asked for.
    """
    data = text.encode("utf-8")
    lo = 0 if start is None else start
    hi = lo + DEFAULT_RANGE_BYTES if end is None else end
    if lo < 0 or hi < 0:
        raise InvalidInputError("rangeStart and rangeEnd must be ≥ 0")
    if hi < lo:
        raise InvalidInputError("rangeEnd must not be before rangeStart")
    if hi - lo > MAX_RANGE_BYTES:
        raise InvalidInputError(f"a range may cover at most {MAX_RANGE_BYTES} bytes")
    if lo > len(data):
        raise InvalidInputError(f"rangeStart is past the end of the body ({len(data)} bytes)")
    hi_clamped = min(hi, len(data))
    a, b = lo, hi_clamped
    # UTF-8 continuation bytes are 0b10xxxxxx: a boundary is never one of them.
    while a < len(data) and (data[a] & 0xC0) == 0x80:
        a += 1
    while b > 0 and b < len(data) and (data[b] & 0xC0) == 0x80:
        b -= 1
    b = max(a, b)
    return data[a:b].decode("utf-8"), ByteRange((lo, hi), (a, b), len(data))


@dataclass(frozen=True)
class InspectLimits:
    """The settings ``inspect`` reads."""

    inspect_limit: int
    max_limit: int
    receipt_lifetime_s: float
    cursors: CursorLimits

    @classmethod
    @functools.lru_cache(maxsize=16)  # one Settings per process; built once, not per call
    def from_settings(cls, settings: Settings) -> InspectLimits:
        return fill(
            cls, settings.read, settings.lifetimes, cursors=CursorLimits.from_settings(settings)
        )


@dataclass(frozen=True)
class _Options:
    atom_id: str
    rev: int | None
    version: Version
    direction: Direction
    roles: tuple[str, ...] | None
    limit: int
    range_start: int | None
    range_end: int | None
    as_of: str | None = None

    @property
    def ranged(self) -> bool:
        return self.range_start is not None or self.range_end is not None

    def query_hash(self, cap: int) -> str:
        return digest(
            [
                "inspect",
                self.atom_id,
                self.rev,
                self.version,
                self.direction,
                self.roles,
                self.limit,
                self.range_start,
                self.range_end,
                cap,
                self.as_of,
            ]
        )


def _options(st: InspectLimits, request: InspectRequest) -> _Options:
    atom_id, rev = request.atom_id, request.rev
    if not isinstance(atom_id, str) or not 1 <= len(atom_id) <= 256:
        raise InvalidInputError("atomId must be 1..256 characters")
    if rev is not None and rev < 1:
        raise InvalidInputError("rev must be ≥ 1")
    version, direction = request.version, request.direction
    if version not in ("observed", "logical"):
        raise InvalidInputError("version must be observed or logical")
    if direction not in ("incoming", "outgoing", "both"):
        raise InvalidInputError("direction must be incoming, outgoing or both")
    limit = st.inspect_limit if request.limit is None else request.limit
    if not 0 <= limit <= st.max_limit:
        raise InvalidInputError(f"limit must be in 0..{st.max_limit}")
    roles = request.roles
    if roles is not None and (
        len(roles) > MAX_ROLES
        or any(not isinstance(r, str) or len(r) > MAX_ROLE_CHARS for r in roles)
    ):
        raise InvalidInputError(f"roles: at most {MAX_ROLES} names of ≤ 256 characters")
    return _Options(
        atom_id,
        rev,
        cast(Version, version),
        cast(Direction, direction),
        None if roles is None else tuple(sorted(set(roles))),
        limit,
        request.range_start,
        request.range_end,
        request.as_of,
    )


def inspect(
    db: Database,
    secret: bytes,
    clock: Callable[[], float],
    model_name: str,
    limits: InspectLimits,
    binding: Binding,
    request: InspectRequest,
) -> InspectResult:
    """Show one revision (default: the head) and its one-hop neighbourhood (SPEC §7).

    Args:
        db: the store.
        secret: the server secret (signs cursors and receipts).
        clock: epoch seconds.
        model_name: the embedding model's name (part of the index generation).
        limits: the settings inspect reads.
        binding: the caller.
        request: the atom, the revision and the page's options
            (:class:`graphsvc.core.requests.InspectRequest`).

    Raises:
        NotFoundError: no such atom or revision in the caller's subject (a purged or
            another subject's atom answers the same).
        InvalidInputError: an option out of range.
        CursorExpiredError: the cursor does not match this call or has expired.
        PurgePendingError: a purge in the subject has not finished.
    """
    opts = _options(limits, request)
    cursor = request.cursor
    pager = Pager(db, secret, clock, limits.cursors, model_name)
    qhash = opts.query_hash(limits.max_limit)
    views: dict[AtomRef, AtomView] | None = None
    if cursor or opts.as_of is not None:
        generation = pager.checked_generation(binding.subject)
        opened = _frozen(
            db, clock, limits.max_limit, pager, binding, opts, cursor, qhash, generation
        )
    else:
        generation, evaluation, views = _first_page(
            db, clock(), binding, opts, limits.max_limit, model_name
        )
        opened = OpenedCursor(evaluation, "", 0, 0.0)
    frozen, offset = opened.payload, opened.offset
    root, neighbors, selection = _page(db, binding, opts, frozen, offset, views)
    next_page = _next_cursor(
        pager,
        binding,
        qhash,
        frozen,
        opened.eval_id,
        offset + opts.limit,
        opened.expires,
        opts,
        generation,
    )
    return InspectResult(
        atom=root,
        neighbors=neighbors,
        receipt=_receipt(secret, limits.receipt_lifetime_s, binding, frozen),
        read_eligibility=frozen["readEligibility"],
        stale=bool(frozen["stale"]),
        diagnostics={**frozen["diagnostics"], "selection": selection},
        usage=frozen["usage"],
        cursor=next_page,
    )


def _frozen(
    db: Database,
    clock: Callable[[], float],
    cap: int,
    pager: Pager,
    binding: Binding,
    opts: _Options,
    cursor: str | None,
    qhash: str,
    generation: str,
) -> OpenedCursor:
    """The evaluation a page is cut from (a first page's: not stored, no id, offset 0).

    A later page reads the one its cursor froze, so the pages of one inspect agree
    even after writes; a first page as of an instant evaluates now (stored only when
    there is a next page, :func:`_next_cursor`). A first page of the present graph
    is :func:`_first_page`.
    """
    if cursor:
        return pager.open_cursor(binding, "inspect", cursor, qhash, generation)
    return OpenedCursor(_evaluate(db, clock(), binding, opts, cap), "", 0, 0.0)


def _page(
    db: Database,
    binding: Binding,
    opts: _Options,
    frozen: dict[str, Any],
    offset: int,
    views: dict[AtomRef, AtomView] | None,
) -> tuple[AtomView, list[Neighbor], dict[str, Any]]:
    """The root's and this page's neighbours' views (read in one round trip unless
    ``views`` already holds them), and the selection.

    Raises:
        NotFoundError: the root is gone since the evaluation.
    """
    page = frozen["neighbors"][offset : offset + opts.limit] if opts.limit else []
    root_ref = AtomRef(frozen["root"]["atomId"], int(frozen["root"]["rev"]))
    if views is None:
        views = load_views(
            db,
            binding.subject,
            [root_ref, *(AtomRef(n["atomId"], int(n["rev"])) for n in page)],
            as_of=opts.as_of,
        )
    if root_ref not in views:
        raise NotFoundError(_NOT_FOUND)
    root = views[root_ref]
    selection: dict[str, Any] = {
        "limit": opts.limit,
        "offset": offset,
        "total": frozen["total"],
    }
    if opts.ranged:
        text, covered = byte_range(root.text, opts.range_start, opts.range_end)
        selection["range"] = covered.to_json()
        root = _with_text(root, text)
    neighbors = [
        Neighbor(views[ref], tuple(_via(v) for v in n["via"]))
        for n in page
        if (ref := AtomRef(n["atomId"], int(n["rev"]))) in views
    ]
    selection["returned"] = len(neighbors)
    return root, neighbors, selection


def _first_page(
    db: Database, now: float, binding: Binding, opts: _Options, cap: int, model_name: str
) -> tuple[str, dict[str, Any], dict[AtomRef, AtomView]]:
    """A first page of the present graph in one round trip (``inspect/first_page``):
    the index generation, the evaluation and the views of the root and the page.

    Raises:
        PurgePendingError: a purge in the subject has not finished (LNK-6).
        NotFoundError: no such atom or revision in the caller's subject.
    """
    model = AdaptiveUseModel()
    want_neighbors = opts.limit > 0 and opts.roles != ()
    row = load_first_page(
        db,
        _root_query(binding, opts, model),
        _neighbor_query(opts, cap, want_neighbors),
        opts.limit,
    )
    generation = index_generation(row, model_name)
    root = row["root"]
    if root is None:
        raise NotFoundError(_NOT_FOUND)
    hood = Neighborhood(
        total=row["total"], neighbors=row["neighbors"], unavailable=row["unavailable"]
    )
    keys = {e["atomId"]: set(e["keys"]) for e in row["entityKeys"]}
    evaluation = _evaluation(now, binding, opts, cap, model, want_neighbors, root, hood, keys)
    views = (view_from_row(v) for v in row["views"])
    return generation, evaluation, {v.ref: v for v in views}


def _root_query(binding: Binding, opts: _Options, model: AdaptiveUseModel) -> RootQuery:
    return RootQuery(binding.subject, opts.atom_id, opts.rev, binding.policy, model.id)


def _neighbor_query(opts: _Options, cap: int, wanted: bool) -> NeighborQuery | None:
    if not wanted:
        return None
    return NeighborQuery(
        version=opts.version,
        outgoing=opts.direction in ("outgoing", "both"),
        incoming=opts.direction in ("incoming", "both"),
        roles=list(opts.roles) if opts.roles is not None else None,
        cap=cap,
    )


def _evaluate(
    db: Database, now: float, binding: Binding, opts: _Options, cap: int
) -> dict[str, Any]:
    """Root facts and the whole (capped) neighbour list as of ``opts.as_of``, from one
    read transaction, and the entity keys from one more read."""
    model = AdaptiveUseModel()
    want_neighbors = opts.limit > 0 and opts.roles != ()
    root, found = load_root_and_neighbors(
        db,
        _root_query(binding, opts, model),
        _neighbor_query(opts, cap, want_neighbors),
        cast(str, opts.as_of),
    )
    if root is None:
        raise NotFoundError(_NOT_FOUND)
    hood = found or Neighborhood(total=0, neighbors=[], unavailable=[])
    atom_ids = [str(root["atomId"]), *(str(n["atomId"]) for n in hood["neighbors"])]
    keys = {
        atom_id: {e.key for e in entities}
        for atom_id, entities in entities_of_atoms(db, binding.subject, atom_ids).items()
    }
    return _evaluation(now, binding, opts, cap, model, want_neighbors, root, hood, keys)


def _evaluation(
    now: float,
    binding: Binding,
    opts: _Options,
    cap: int,
    model: AdaptiveUseModel,
    want_neighbors: bool,
    root: RootFacts,
    hood: Neighborhood,
    keys: dict[str, set[str]],
) -> dict[str, Any]:
    """The evaluation a page is cut from, built from what the store read: the root's
    facts, its neighbourhood and the entity keys of the root's and neighbours' heads."""
    neighbors = [
        {
            "atomId": n["atomId"],
            "rev": int(n["rev"]),
            "via": [_via_json(v) for v in sorted(n["via"], key=_via_order)],
        }
        for n in hood["neighbors"]
    ]
    unavailable = [
        {**_via_json(v), "unavailable": True} for v in sorted(hood["unavailable"], key=_via_order)
    ]
    watches = [dict(w) for w in root["watches"]]
    usage_state = json.loads(root["usage"]) if root["usage"] else None
    usage = (
        None
        if usage_state is None
        else {
            "modelId": model.id,
            "policy": binding.policy,
            "state": usage_state,
            "value": checked_value(model, usage_state, now),
            "evaluatedAt": now,
        }
    )
    diagnostics = _diagnostics(
        now, opts, cap, want_neighbors, root, hood["total"], unavailable, watches
    )
    diagnostics["evaluation"]["entities"] = _entities(root, [n["atomId"] for n in neighbors], keys)
    return {
        "root": {"atomId": root["atomId"], "rev": int(root["rev"]), "digest": root["digest"]},
        "evaluatedAt": now,
        "neighbors": neighbors,
        "total": int(hood["total"]),
        "readEligibility": _eligibility(root),
        "stale": any(w["moved"] for w in watches),
        "usage": usage,
        "diagnostics": diagnostics,
    }


def _entities(
    root: RootFacts, neighbour_ids: list[str], keys: dict[str, set[str]]
) -> dict[str, Any]:
    """What the entity index (SPEC §16, ENT-5) holds for the root's current head: the
    entities it mentions (at most 20 keys shown), and how many of the listed
    neighbours mention one of them too. Inspect scores nothing, so the share of score
    that came through entities is search's (``evaluation.entities.share``)."""
    own = keys.get(str(root["atomId"]), set())
    sharing = sum(1 for a in neighbour_ids if own & keys.get(a, set()))
    return {
        "mentions": len(own),
        "keys": sorted(own)[:20],
        "neighboursSharing": sharing,
        "of": "the current head" if root["headRev"] == root["rev"] else "the head (not this rev)",
        "share": None,
    }


def _diagnostics(
    now: float,
    opts: _Options,
    cap: int,
    want_neighbors: bool,
    root: RootFacts,
    total: int,
    unavailable: list[dict[str, Any]],
    watches: list[dict[str, Any]],
) -> dict[str, Any]:
    """What inspect acquired and validated (it evaluates nothing)."""
    return {
        "acquisition": {
            "evaluatedAt": now,
            "version": opts.version,
            "direction": opts.direction,
            "roles": list(opts.roles) if opts.roles is not None else None,
            "neighborsSkipped": None if want_neighbors else "limit 0 or roles []",
            "neighbors": int(total),
            "truncated": int(total) > cap,
            "cap": cap,
            "incoming": "links held by the head revision of each linking atom",
            "unavailable": unavailable,
            "unavailableCount": len(unavailable),
        },
        "validation": {
            "head": root["headRev"] == root["rev"],
            "headRev": root["headRev"],
            "state": root["state"],
            "requiredLinks": root["requiredLinks"],
            "requiredBlocked": root["requiredBlocked"],
            "watches": watches,
        },
        "evaluation": {
            "solver": None,
            "numeric": False,
            "note": "inspect scores nothing: no retrieval graph is solved",
        },
    }


def _eligibility(root: RootFacts) -> dict[str, Any]:
    """LNK-3: what showing the body does *not* prove. One hop of required links only."""
    reasons: list[str] = []
    if root["headRev"] != root["rev"]:
        reasons.append("superseded")
    if root["state"] == "retired" or root["headState"] == "retired":
        reasons.append("retired")
    archived = (root["atomisedInto"] or 0) > 0 and bool(root["archivedAt"])
    if archived:
        reasons.append("archived")
    if root["requiredBlocked"]:
        reasons.append("blocked")
    return {
        "eligible": not reasons,
        "reasons": reasons,
        "eligibleWithIncludeArchived": reasons == ["archived"],
        "checked": "revision, head, archive flags and the root's own required links",
    }


def _receipt(
    secret: bytes, lifetime_s: float, binding: Binding, frozen: dict[str, Any]
) -> dict[str, Any]:
    root = frozen["root"]
    evaluated = float(frozen["evaluatedAt"])
    expires = evaluated + lifetime_s
    sealed = seal(
        secret,
        "receipt",
        {
            "k": "inspect",
            "a": root["atomId"],
            "r": root["rev"],
            "d": root["digest"],
            "b": digest(binding.scope()),
            "t": evaluated,
            "x": expires,
        },
    )
    return {
        "receipt": sealed,
        "kind": "inspect",
        "atomId": root["atomId"],
        "rev": root["rev"],
        "digest": root["digest"],
        "evaluatedAt": evaluated,
        "expiresAt": expires,
    }


def _next_cursor(
    pager: Pager,
    binding: Binding,
    qhash: str,
    frozen: dict[str, Any],
    eval_id: str,
    next_offset: int,
    expires: float,
    opts: _Options,
    generation: str,
) -> str | None:
    if opts.limit == 0 or next_offset >= len(frozen["neighbors"]):
        return None
    if eval_id:
        return pager.next_cursor(
            binding, "inspect", qhash, eval_id, next_offset, expires, generation
        )
    return pager.save_and_cursor(binding, "inspect", qhash, frozen, next_offset, generation)


def _via_order(v: dict[str, Any]) -> tuple[int, int, str]:
    return (0 if v["direction"] == "outgoing" else 1, int(v.get("ordinal") or 0), v["role"])


def _via_json(v: dict[str, Any]) -> dict[str, Any]:
    out = {
        "direction": v["direction"],
        "role": v["role"],
        "at": v["at"],
        "required": bool(v["required"]),
    }
    if v.get("orderKey") is not None:
        out["orderKey"] = v["orderKey"]
    return out


def _via(v: dict[str, Any]) -> Via:
    return Via(v["direction"], v["role"], v["at"], bool(v["required"]), v.get("orderKey"))


def _with_text(view: AtomView, text: str) -> AtomView:
    return replace(view, text=text)
