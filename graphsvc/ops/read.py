"""``read`` (SPEC §8–§10): evaluate once, close over required links, pack, render, manifest.

Steps: one evaluation (candidates, activation — RD-1); roots are the top
``limit`` ranked atoms of the page; their required closures (one query per
two closure levels) and bodies are read in the evaluation's own read transaction;
bodies become the core's ``Body`` values; :func:`graphsvc.core.packing.pack`
chooses what fits the budget on the exact tiktoken count of the final text
(RD-4, RD-6, RD-8); the manifest (contractVersion 2) is recorded after packing.
When there is a next page, its frozen evaluation is written by a worker thread
while this one packs (it does not depend on the packing); the read waits for that
write before it hands out the cursor.
"""

from __future__ import annotations

import functools
import hashlib
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphsvc.core.binding import Binding
from graphsvc.core.citations import parse_store_uri, unit_length
from graphsvc.core.head_mirror import HeadMirror
from graphsvc.core.packing import pack
from graphsvc.core.requests import ReadRequest
from graphsvc.core.selection_models import (
    Body,
    Candidate,
    Citation,
    PackedItem,
    PackResult,
    PublicLink,
    Ref,
    RequiredEdge,
    Selection,
)
from graphsvc.core.write_models import AtomRef, AtomView
from graphsvc.errors import InvalidInputError
from graphsvc.ops.cursors import CursorLimits, FrozenEvaluation, Pager, digest
from graphsvc.ops.evaluate import Evaluation, evaluate_then
from graphsvc.ops.ranked_rows import RankedRow
from graphsvc.settings import RankingSettings, fill
from graphsvc.store.closure import cited_texts, required_two_levels
from graphsvc.store.connection import Database, Tx
from graphsvc.store.manifests import NewManifest, save_manifest
from graphsvc.store.views import load_views

if TYPE_CHECKING:
    from graphsvc.embed import Embedder
    from graphsvc.settings import Settings
    from graphsvc.tokenizer import Tokenizer

__all__ = ["ReadLimits", "ReadResult", "read"]

FORMAT_VERSION = 2
CONTRACT_VERSION = 2


@dataclass(frozen=True)
class ReadResult:
    text: str
    format_version: int
    items: tuple[PackedItem, ...]
    selection: Selection
    manifest: dict[str, Any]
    diagnostics: dict[str, Any]
    cursor: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "formatVersion": self.format_version,
            "items": [i.to_dict() for i in self.items],
            "selection": self.selection.to_dict(),
            "manifest": self.manifest,
            "diagnostics": self.diagnostics,
            "cursor": self.cursor,
        }


@dataclass(frozen=True)
class ReadLimits:
    """The settings ``read`` reads (defaults, ranges, work caps, lifetimes)."""

    depth: int
    read_limit: int
    max_read_budget: int
    max_limit: int
    manifest_lifetime_s: float
    ranking: RankingSettings
    cursors: CursorLimits

    @classmethod
    @functools.lru_cache(maxsize=16)  # one Settings per process; built once, not per call
    def from_settings(cls, settings: Settings) -> ReadLimits:
        return fill(
            cls,
            settings.read,
            settings.lifetimes,
            ranking=settings.ranking,
            cursors=CursorLimits.from_settings(settings),
        )


def read(
    db: Database,
    embedder: Embedder,
    tokenizer: Tokenizer,
    secret: bytes,
    clock: Callable[[], float],
    limits: ReadLimits,
    binding: Binding,
    request: ReadRequest,
) -> ReadResult:
    """Present a token-budgeted, dependency-complete set of bodies for ``request.query``.

    Args:
        db: the store.
        embedder: embeds the query.
        tokenizer: counts the tokens of the final text.
        secret: the server secret (signs cursors).
        clock: epoch seconds.
        limits: the settings a read reads.
        binding: the caller.
        request: the query, the budget and their options.

    Raises:
        InvalidInputError: empty query, budget/depth/limit out of range.
        PurgePendingError: a purge in the subject has not finished (LNK-6).
        CursorExpiredError: the cursor no longer matches (CUR-2).
    """
    query_text, memory_token_budget = request.query, request.memory_token_budget
    include_archived = request.include_archived
    depth = limits.depth if request.depth is None else request.depth
    limit = limits.read_limit if request.limit is None else request.limit
    _check(limits, query_text, memory_token_budget, depth, limit)
    qhash = digest(["read", query_text, memory_token_budget, depth, limit, include_archived])
    reader = _Reader(
        db,
        embedder,
        clock,
        limits,
        binding,
        Pager(db, secret, clock, limits.cursors, embedder.model_name),
    )
    if request.cursor:
        page = reader.later_page(request.cursor, qhash, limit)
    else:
        page = reader.first_page(query_text, depth, limit, include_archived, request.paged)
    bodies, required, validation = page.closed
    result = pack(
        page.roots,
        bodies,
        required,
        memory_token_budget,
        tokenizer.count,
        work_limit=limits.ranking.packing_work,
    )
    manifest = _record(reader, query_text, result, page.evaluated_at, bodies)
    return ReadResult(
        text=result.text,
        format_version=FORMAT_VERSION,
        items=result.items,
        selection=result.selection(),
        manifest=manifest,
        diagnostics={
            "acquisition": page.diagnostics.get("acquisition", {}),
            "validation": validation,
            "evaluation": page.diagnostics.get("evaluation", {}),
            "selection": result.diagnostics(),
            "page": {"offset": page.offset, "total": len(page.ranked)},
        },
        cursor=reader.next_page(page, qhash, limit),
    )


def _check(
    limits: ReadLimits, query_text: str, memory_token_budget: int, depth: int, limit: int
) -> None:
    """Raises InvalidInputError for an empty query or a budget/depth/limit out of range."""
    if not query_text.strip() or len(query_text) > 10_000:
        raise InvalidInputError("query must be 1..10000 characters of text")
    if not 0 <= memory_token_budget <= limits.max_read_budget:
        raise InvalidInputError(f"memoryTokenBudget must be in 0..{limits.max_read_budget}")
    if not 1 <= limit <= limits.max_limit:
        raise InvalidInputError(f"limit must be in 1..{limits.max_limit}")
    if not 0 <= depth <= limits.ranking.max_depth:
        raise InvalidInputError(f"depth must be in 0..{limits.ranking.max_depth}")


_Closed = tuple[dict[Ref, Body], dict[Ref, list[RequiredEdge]], dict[str, Any]]


@dataclass
class _Page:
    """One page's roots and everything loaded for them, before packing."""

    ranked: list[RankedRow]
    roots: list[Candidate]
    closed: _Closed
    diagnostics: dict[str, Any]
    evaluated_at: float
    generation: str
    offset: int = 0
    eval_id: str = ""
    expires: float = 0.0
    # The next page's frozen evaluation, stored behind the answer (first pages only).
    saving: FrozenEvaluation | None = None


@dataclass(frozen=True)
class _Reader:
    """One read's dependencies and caller."""

    db: Database
    embedder: Embedder
    clock: Callable[[], float]
    limits: ReadLimits
    binding: Binding
    pager: Pager

    def later_page(self, cursor: str, qhash: str, limit: int) -> _Page:
        """A later page: from the cursor's frozen evaluation, closures in a transaction."""
        # A later page skips the evaluation, which holds the first page's purge
        # check; an unfinished purge must stop every page (LNK-6).
        generation = self.pager.checked_generation(self.binding.subject)
        opened = self.pager.open_cursor(self.binding, "read", cursor, qhash, generation)
        payload, offset = opened.payload, opened.offset
        ranked = payload["ranked"]
        roots = _roots(ranked[offset : offset + limit])
        closed = self.db.read_tx(
            lambda tx: self.closures(tx, [c.ref for c in roots]), label="read closure"
        )
        return _Page(
            ranked,
            roots,
            closed,
            payload["diagnostics"],
            payload["evaluatedAt"],
            generation,
            offset=offset,
            eval_id=opened.eval_id,
            expires=opened.expires,
        )

    def first_page(
        self, query_text: str, depth: int, limit: int, include_archived: bool, paged: bool = True
    ) -> _Page:
        """The first page: one evaluation, closures and bodies in its transaction."""

        def then(tx: Tx, ev: Evaluation) -> _Page:
            ranked = ev.ranked_rows()
            roots = _roots(ranked[:limit])
            closed = self.closures(tx, [c.ref for c in roots], ev.mirror)
            return _Page(ranked, roots, closed, ev.diagnostics, ev.evaluated_at, "")

        ev, page = evaluate_then(
            self.db,
            self.embedder,
            self.clock,
            self.limits.ranking,
            self.binding,
            query_text,
            depth=depth,
            include_archived=include_archived,
            then=then,
        )
        page.generation = ev.generation
        if paged and limit < len(page.ranked):
            # Stored once (not per attempt of a retried transaction), behind the answer:
            # the cursor's later page waits for it (Pager.save_later).
            page.saving = self.save_soon(ev, page.ranked)
        return page

    def save_soon(self, ev: Evaluation, ranked: list[RankedRow]) -> FrozenEvaluation:
        payload = {"ranked": ranked, "diagnostics": ev.diagnostics, "evaluatedAt": ev.evaluated_at}
        frozen = self.pager.frozen(self.binding, payload, ev.generation)
        self.pager.save_later(frozen)
        return frozen

    def next_page(self, page: _Page, qhash: str, limit: int) -> str | None:
        """The cursor of the next page, if there is one (its evaluation already stored)."""
        next_offset = page.offset + limit
        if next_offset >= len(page.ranked):
            return None
        eval_id, expires = page.eval_id, page.expires
        if page.saving is not None:  # being stored behind the answer
            eval_id, expires = page.saving.eval_id, page.saving.expires_at
        elif not eval_id:  # a first page left unstored: its operation selects no cursor
            return None
        return self.pager.next_cursor(
            self.binding, "read", qhash, eval_id, next_offset, expires, page.generation
        )

    def closures(self, tx: Tx, roots: list[Ref], mirror: HeadMirror | None = None) -> _Closed:
        """Resolve required closures and load every body they may present, in ``tx``;
        the heads ``mirror`` holds (the evaluation's, if it came from one) from it."""
        s = self.binding.subject
        db = self.db
        root_refs = [AtomRef(r.atom_id, r.rev) for r in roots]
        # The roots' bodies (most of what a read presents) load beside the walk; with a
        # mirror the roots are heads it holds (any it does not: read in ``tx``).
        soon = (
            db.soon(lambda: load_views(db, s, root_refs), label="root views")
            if mirror is None
            else None
        )
        walk = _walk(tx, s, roots, self.limits.ranking.max_nodes * 8, mirror)
        root_views = (
            soon.result()
            if soon is not None
            else load_views(db, s, root_refs, tx=tx, mirror=mirror)
        )
        roots_set = set(roots)
        rest = (AtomRef(r.atom_id, r.rev) for r in walk.seen if r not in roots_set)
        views = {**root_views, **load_views(db, s, rest, tx=tx, mirror=mirror)}
        quoted = _quoted_texts(tx, s, views.values())
        bodies = {
            Ref(v.atom_id, v.rev): _body(v, quoted) for v in views.values() if v.state != "retired"
        }
        return bodies, walk.required, walk.validation()


def _roots(page: list[RankedRow]) -> list[Candidate]:
    return [Candidate(Ref(r["atomId"], int(r["rev"])), float(r["score"])) for r in page]


@dataclass
class _Walk:
    """The required closure of some roots: every required edge and the revisions seen."""

    required: dict[Ref, list[RequiredEdge]]
    seen: dict[Ref, None]
    levels: int
    frontier: list[Ref]  # unexpanded at the size cap (the closure is truncated)

    def validation(self) -> dict[str, Any]:
        required = self.required
        return {
            "closureLevels": self.levels,
            "closureRevisions": len(self.seen),
            "requiredEdges": sum(len(e) for e in required.values()),
            "blockingEdges": sum(1 for es in required.values() for e in es if e.status != "ok"),
            "closureTruncated": bool(self.frontier),
        }


def _walk(
    tx: Tx, subject: str, roots: list[Ref], max_revisions: int, mirror: HeadMirror | None = None
) -> _Walk:
    """Walk the required links from ``roots`` (two levels per query), within the cap.

    A revision that ``mirror`` holds as a head declaring no required link has no
    edges (:meth:`HeadMirror.requires_nothing`), so it is not asked for: a level of
    such revisions only (most reads) needs no round trip. The edges of the rest come
    from ``read/required_two_levels`` in the same order as when all are asked.
    """
    walk = _Walk({}, dict.fromkeys(roots), 0, list(roots))
    required, seen = walk.required, walk.seen
    # The next level's edges, fetched with this one: (revisions asked for, edges).
    ahead: tuple[set[Ref], list[RequiredEdge]] | None = None
    while walk.frontier and len(seen) <= max_revisions:
        walk.levels += 1
        asked = [
            r
            for r in walk.frontier
            if mirror is None or not mirror.requires_nothing(AtomRef(r.atom_id, r.rev))
        ]
        if ahead is not None and ahead[0].issuperset(asked):
            wanted = set(asked)
            edges = [e for e in ahead[1] if e.source in wanted]
            ahead = None
        elif not asked:
            edges = []
        else:
            two = required_two_levels(tx, subject, asked)
            edges = two.first
            ahead = (two.covered, two.second)
        nxt: list[Ref] = []
        for edge in edges:
            required.setdefault(edge.source, []).append(edge)
            target = edge.target
            if edge.status == "ok" and target is not None and target not in seen:
                seen[target] = None
                nxt.append(target)
        walk.frontier = nxt
    # The walk stopped at the size cap with revisions still unexpanded: their
    # required links are unknown, so they must block (never a partial closure).
    for ref in walk.frontier:
        required.setdefault(ref, []).append(RequiredEdge(ref, None, "missing"))
    return walk


def _quoted_texts(tx: Tx, subject: str, views: Iterable[AtomView]) -> dict[tuple[str, int], str]:
    """Texts of stored atoms cited with a verified range (for evidence sharing)."""
    wanted: set[tuple[str, int]] = set()
    for v in views:
        for src in v.sources:
            atom_id = parse_store_uri(src.get("uri", ""))
            if atom_id and src.get("verified") and src.get("range") and src.get("version"):
                wanted.add((atom_id, int(src["version"])))
    if not wanted:
        return {}
    return cited_texts(tx, subject, sorted(wanted))


def _slice(text: str, start: int, end: int, unit: str) -> str:
    if unit == "char":
        return text[start:end]
    if unit == "byte":
        return text.encode("utf-8")[start:end].decode("utf-8", errors="strict")
    lines = text.splitlines(keepends=True)
    return "".join(lines[start:end])


def _body(view: AtomView, quoted: dict[tuple[str, int], str]) -> Body:
    links = tuple(
        PublicLink(
            role=link.role,
            at=link.at,
            required=link.required,
            order_key=link.order_key,
            target=None
            if link.unavailable or link.target is None
            else Ref(link.target.atom_id, link.target.rev),
            unavailable=link.unavailable or link.target is None,
        )
        for link in view.links
    )
    sources = []
    for src in view.sources:
        rng = src.get("range") or {}
        quoted_text = None
        atom_id = parse_store_uri(src.get("uri", ""))
        if atom_id and src.get("verified") and rng and src.get("version"):
            cited = quoted.get((atom_id, int(src["version"])))
            if cited is not None and rng["end"] <= unit_length(cited, rng["unit"]):
                try:
                    quoted_text = _slice(cited, rng["start"], rng["end"], rng["unit"])
                except UnicodeDecodeError:
                    quoted_text = None
        sources.append(
            Citation(
                uri=src["uri"],
                version=src.get("version"),
                digest=src.get("digest"),
                start=rng.get("start"),
                end=rng.get("end"),
                unit=rng.get("unit"),
                verified=bool(src.get("verified")) and quoted_text is not None,
                quoted_text=quoted_text,
            )
        )
    return Body(Ref(view.atom_id, view.rev), view.text, links, tuple(sources))


def _record(
    reader: _Reader,
    query_text: str,
    result: PackResult,
    evaluated_at: float,
    bodies: dict[Ref, Body],
) -> dict[str, Any]:
    """Record the manifest (contractVersion 2, MAN-1; observe/recordUse cite it)."""
    binding = reader.binding
    presented = list(result.presented)
    manifest_id = uuid.uuid4().hex
    now = reader.clock()
    text_digest = "sha256:" + hashlib.sha256(result.text.encode("utf-8")).hexdigest()
    save_manifest(
        reader.db,
        NewManifest(
            subject=binding.subject,
            manifest_id=manifest_id,
            digest=text_digest,
            now=now,
            expired_before=now - reader.limits.manifest_lifetime_s,
            policy=binding.policy,
            actor_kind=binding.actor_kind,
            actor_id=binding.actor_id,
            presented=[AtomRef(r.atom_id, r.rev) for r in presented],
        ),
    )
    ranges = [
        {
            "ref": r.key,
            "uri": c.uri,
            "version": c.version,
            "start": c.start,
            "end": c.end,
            "unit": c.unit,
        }
        for r in presented
        for c in bodies[r].sources
        if c.start is not None
    ]
    return {
        "id": manifest_id,
        "contractVersion": CONTRACT_VERSION,
        "acquisition": {
            "query": query_text,
            "evaluatedAt": evaluated_at,
            "indexState": {"embeddingModel": reader.embedder.model_name},
            "versions": [r.key for r in bodies],
        },
        "presentation": {
            "revisions": [{"atomId": r.atom_id, "rev": r.rev} for r in presented],
            "digest": text_digest,
            "formatVersion": FORMAT_VERSION,
            "ranges": ranges,
        },
        "watches": {
            "heads": [{"atomId": r.atom_id, "rev": r.rev} for r in presented],
            "queries": [{"query": query_text, "evaluatedAt": evaluated_at}],
        },
        "generation": None,
        "acknowledgement": None,
    }
