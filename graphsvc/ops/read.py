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

import hashlib
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from neo4j import ManagedTransaction

from graphsvc.core.binding import Binding
from graphsvc.core.citations import parse_store_uri, unit_length
from graphsvc.core.packing import pack
from graphsvc.core.selection_models import (
    Body,
    Candidate,
    Citation,
    PackResult,
    PublicLink,
    Ref,
    RequiredEdge,
)
from graphsvc.core.write_models import AtomRef, AtomView
from graphsvc.errors import InvalidInputError
from graphsvc.ops.cursors import (
    checked_generation,
    digest,
    evaluation_params,
    next_cursor,
    open_cursor,
    save_evaluation,
)
from graphsvc.ops.evaluate import Evaluation, evaluate_then
from graphsvc.store.connection import run
from graphsvc.store.views import load_views

if TYPE_CHECKING:
    from concurrent.futures import Future

    from graphsvc.service import Service

__all__ = ["ReadResult", "read"]

FORMAT_VERSION = 2
CONTRACT_VERSION = 2


@dataclass(frozen=True)
class ReadResult:
    text: str
    format_version: int
    items: list[dict[str, Any]]
    selection: dict[str, Any]
    manifest: dict[str, Any]
    diagnostics: dict[str, Any]
    cursor: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "formatVersion": self.format_version,
            "items": self.items,
            "selection": self.selection,
            "manifest": self.manifest,
            "diagnostics": self.diagnostics,
            "cursor": self.cursor,
        }


def read(
    service: Service,
    binding: Binding,
    query_text: str,
    memory_token_budget: int,
    *,
    depth: int | None = None,
    limit: int | None = None,
    include_archived: bool = False,
    cursor: str | None = None,
) -> ReadResult:
    """Present a token-budgeted, dependency-complete set of bodies for ``query_text``.

    Raises:
        InvalidInputError: empty query, budget/depth/limit out of range.
        PurgePendingError: a purge in the subject has not finished (LNK-6).
        CursorExpiredError: the cursor no longer matches (CUR-2).
    """
    st = service.settings
    depth = st.depth if depth is None else depth
    limit = st.read_limit if limit is None else limit
    if not query_text.strip() or len(query_text) > 10_000:
        raise InvalidInputError("query must be 1..10000 characters of text")
    if not 0 <= memory_token_budget <= st.max_read_budget:
        raise InvalidInputError(f"memoryTokenBudget must be in 0..{st.max_read_budget}")
    if not 1 <= limit <= st.max_limit:
        raise InvalidInputError(f"limit must be in 1..{st.max_limit}")
    if not 0 <= depth <= st.max_depth:
        raise InvalidInputError(f"depth must be in 0..{st.max_depth}")
    qhash = digest(["read", query_text, memory_token_budget, depth, limit, include_archived])
    saving: _Saving | None = None
    started: list[_Saving] = []  # every attempt's, should the driver retry the evaluation
    if cursor:
        # A later page skips the evaluation, which holds the first page's purge
        # check; an unfinished purge must stop every page (LNK-6).
        generation = checked_generation(service, binding.subject)
        payload, eval_id, offset, expires = open_cursor(
            service, binding, "read", cursor, qhash, generation
        )
        ranked = payload["ranked"]
        eval_diag = payload["diagnostics"]
        evaluated_at = payload["evaluatedAt"]
        roots = _roots(ranked[offset : offset + limit])
        closed = service.db.read_tx(
            lambda tx: _closures(tx, service, binding, [c.ref for c in roots]),
            label="read closure",
        )
    else:
        offset, eval_id, expires = 0, "", 0.0

        def first_page(tx: ManagedTransaction, ev: Evaluation) -> _FirstPage:
            ranked = ev.ranked_rows()
            roots = _roots(ranked[:limit])
            closed = _closures(tx, service, binding, [c.ref for c in roots])
            page_saving = None
            if limit < len(ranked):
                # The next page's frozen evaluation does not depend on the packing:
                # Neo4j writes it while this thread packs.
                page_saving = _save_soon(service, binding, ev, ranked)
                started.append(page_saving)
            return ranked, roots, closed, page_saving

        ev, (ranked, roots, closed, saving) = evaluate_then(
            service,
            binding,
            query_text,
            depth=depth,
            include_archived=include_archived,
            then=first_page,
        )
        eval_diag = ev.diagnostics
        evaluated_at = ev.evaluated_at
        generation = ev.generation
    bodies, required, validation = closed
    try:
        result = pack(
            roots,
            bodies,
            required,
            memory_token_budget,
            service.tokenizer.count,
            work_limit=st.packing_work,
        )
        manifest = _record(service, binding, query_text, result, evaluated_at, bodies)
    finally:
        # The evaluation's write never outlives the request, even when packing or
        # the manifest failed (then its error is the one raised).
        for _, pending in started:
            pending.exception()  # waits; does not raise
    if saving is not None and (error := saving[1].exception()) is not None:
        raise error
    next_offset = offset + limit
    next_page: str | None = None
    if next_offset < len(ranked):
        if saving is not None:  # stored (waited for above) before its cursor is out
            eval_id, expires = saving[0]["evalId"], saving[0]["expiresAt"]
        next_page = next_cursor(
            service, binding, "read", qhash, eval_id, next_offset, expires, generation
        )
    return ReadResult(
        text=result.text,
        format_version=FORMAT_VERSION,
        items=[dict(item) for item in result.items_dicts()],
        selection=dict(result.selection_dict()),
        manifest=manifest,
        diagnostics={
            "acquisition": eval_diag.get("acquisition", {}),
            "validation": validation,
            "evaluation": eval_diag.get("evaluation", {}),
            "selection": result.diagnostics(),
            "page": {"offset": offset, "total": len(ranked)},
        },
        cursor=next_page,
    )


_Closed = tuple[dict[Ref, Body], dict[Ref, list[RequiredEdge]], dict[str, Any]]
# A frozen evaluation's parameters and its write, started in a worker thread.
_Saving = tuple[dict[str, Any], "Future[None]"]
_FirstPage = tuple[list[dict[str, Any]], list[Candidate], _Closed, _Saving | None]


def _save_soon(
    service: Service, binding: Binding, ev: Evaluation, ranked: list[dict[str, Any]]
) -> _Saving:
    payload = {"ranked": ranked, "diagnostics": ev.diagnostics, "evaluatedAt": ev.evaluated_at}
    params = evaluation_params(service, binding, payload)
    pending = service.db.soon(lambda: save_evaluation(service.db, params), label="save evaluation")
    return params, pending


def _roots(page: list[dict[str, Any]]) -> list[Candidate]:
    return [Candidate(Ref(r["atomId"], int(r["rev"])), float(r["score"])) for r in page]


def _closures(
    tx: ManagedTransaction, service: Service, binding: Binding, roots: list[Ref]
) -> _Closed:
    """Resolve required closures and load every body they may present, in ``tx``."""
    s = binding.subject
    max_revisions = service.settings.max_nodes * 8
    # The roots' bodies (most of what a read presents) load beside the closure walk.
    root_refs = [AtomRef(r.atom_id, r.rev) for r in roots]
    root_views = service.db.soon(lambda: load_views(service.db, s, root_refs), label="root views")
    required: dict[Ref, list[RequiredEdge]] = {}
    roots_set = set(roots)
    seen: dict[Ref, None] = dict.fromkeys(roots)
    frontier = list(roots)
    levels = 0
    # The next level's rows, fetched with this one: (revisions asked for, rows).
    ahead: tuple[set[Ref], list[dict[str, Any]]] | None = None
    while frontier and len(seen) <= max_revisions:
        levels += 1
        if ahead is not None and ahead[0].issuperset(frontier):
            wanted = set(frontier)
            rows = [r for r in ahead[1] if Ref(r["srcAtomId"], int(r["srcRev"])) in wanted]
            ahead = None
        else:
            two = run(
                tx,
                "read/required_two_levels",
                subject=s,
                refs=[{"atomId": r.atom_id, "rev": r.rev} for r in frontier],
            )[0]
            rows = two["first"]
            ahead = ({Ref(x["atomId"], int(x["rev"])) for x in two["covered"]}, two["second"])
        nxt: list[Ref] = []
        for row in rows:
            src = Ref(row["srcAtomId"], int(row["srcRev"]))
            target = None if row["atomId"] is None else Ref(row["atomId"], int(row["rev"]))
            if row["unavailable"] or target is None:
                edge = RequiredEdge(src, None, "missing")
            elif row["at"] == "logical" and row["state"] == "retired":
                edge = RequiredEdge(src, target, "retired")
            elif row["stale"]:
                edge = RequiredEdge(src, target, "stale")
            else:
                edge = RequiredEdge(src, target, "ok")
            required.setdefault(src, []).append(edge)
            if edge.status == "ok" and target is not None and target not in seen:
                seen[target] = None
                nxt.append(target)
        frontier = nxt
    # The walk stopped at the size cap with revisions still unexpanded: their
    # required links are unknown, so they must block (never a partial closure).
    for ref in frontier:
        required.setdefault(ref, []).append(RequiredEdge(ref, None, "missing"))
    rest = (AtomRef(r.atom_id, r.rev) for r in seen if r not in roots_set)
    views = {**root_views.result(), **load_views(service.db, s, rest, tx=tx)}
    quoted = _quoted_texts(tx, binding, views.values())
    bodies = {
        Ref(v.atom_id, v.rev): _body(v, quoted) for v in views.values() if v.state != "retired"
    }
    blocked_edges = sum(1 for edges in required.values() for e in edges if e.status != "ok")
    validation = {
        "closureLevels": levels,
        "closureRevisions": len(seen),
        "requiredEdges": sum(len(e) for e in required.values()),
        "blockingEdges": blocked_edges,
        "closureTruncated": bool(frontier),
    }
    return bodies, required, validation


def _quoted_texts(
    tx: ManagedTransaction, binding: Binding, views: Any
) -> dict[tuple[str, int], str]:
    """Texts of stored atoms cited with a verified range (for evidence sharing)."""
    wanted: set[tuple[str, int]] = set()
    for v in views:
        for src in v.sources:
            atom_id = parse_store_uri(src.get("uri", ""))
            if atom_id and src.get("verified") and src.get("range") and src.get("version"):
                wanted.add((atom_id, int(src["version"])))
    if not wanted:
        return {}
    rows = run(
        tx,
        "read/cited_texts",
        subject=binding.subject,
        refs=[{"atomId": a, "rev": r} for a, r in sorted(wanted)],
    )
    return {(r["atomId"], int(r["rev"])): r["text"] for r in rows}


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
    service: Service,
    binding: Binding,
    query_text: str,
    result: PackResult,
    evaluated_at: float,
    bodies: dict[Ref, Body],
) -> dict[str, Any]:
    """Record the manifest (contractVersion 2, MAN-1; observe/recordUse cite it)."""
    presented = list(result.presented)
    manifest_id = uuid.uuid4().hex
    now = service.clock()
    text_digest = "sha256:" + hashlib.sha256(result.text.encode("utf-8")).hexdigest()
    manifest_params = {
        "subject": binding.subject,
        "manifestId": manifest_id,
        "digest": text_digest,
        "now": now,
        "expiredBefore": now - service.settings.manifest_lifetime_s,
        "policy": binding.policy,
        "actorKind": binding.actor_kind,
        "actorId": binding.actor_id,
        "presented": [{"atomId": r.atom_id, "rev": r.rev} for r in presented],
    }

    service.db.write("read/save_manifest", **manifest_params)
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
            "indexState": {"embeddingModel": service.embedder.model_name},
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
