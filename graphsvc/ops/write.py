"""The ``write`` use case (SPEC §2–§4): validate, resolve, embed, commit in one transaction.

Order of checks: plan shape and limits (pure) → tokens' MAC and scope →
semantic fingerprint → idempotent replay (IDEM-2/4: a committed plan is returned
even after its tokens expired) → token expiry and purge → embeddings of the new
heads → one Neo4j transaction (purge marker, idempotency claim, CAS, targets,
everything else) → views of the committed revisions.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from graphsvc.core.binding import Binding
from graphsvc.core.citations import check_range, parse_store_uri, source_key
from graphsvc.core.write_models import AtomRef, AtomView, Change
from graphsvc.core.write_plan import Limits, plan_fingerprint, validate_plan
from graphsvc.embed import Embedder
from graphsvc.entities import EntityExtractor
from graphsvc.errors import (
    DependencyInvalidError,
    IdempotencyConflictError,
    InvalidInputError,
    PermissionDeniedError,
)
from graphsvc.ops.input_tokens import TokenClaims, check_tokens_exist, open_token
from graphsvc.settings import Settings
from graphsvc.store.connection import Database
from graphsvc.store.entities import head_mentions
from graphsvc.store.jobs import NewJob
from graphsvc.store.views import load_views
from graphsvc.store.write_steps import NewRevision, new_revision
from graphsvc.store.write_store import (
    NewCitation,
    NewGeneration,
    NewLink,
    Replay,
    RequiredRef,
    RetireCopy,
    StoreRef,
    WriteRequest,
    commit_write,
    find_idempotency,
    find_revisions,
    head_revs,
)
from graphsvc.tokenizer import Tokenizer

__all__ = [
    "WriteDeps",
    "WriteOutcome",
    "build_request",
    "check_live_tokens",
    "check_replay",
    "embed_into",
    "extract_into",
    "idempotency_scope",
    "limits_from_settings",
    "open_claims",
    "write",
]


@dataclass(frozen=True)
class WriteDeps:
    """What a write uses: the store, the models, the token secret, time and limits."""

    db: Database
    embedder: Embedder
    tokenizer: Tokenizer
    secret: bytes
    clock: Callable[[], float]
    limits: Limits
    # The entity extractor (SPEC §16); None: the entity index is off.
    extractor: EntityExtractor | None = None


@dataclass(frozen=True)
class WriteOutcome:
    operation_id: str
    repeated: bool
    indexing: str
    changes: dict[str, AtomView]
    extra: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "operationId": self.operation_id,
            "repeated": self.repeated,
            "indexing": self.indexing,
            "changes": {cid: v.to_json() for cid, v in self.changes.items()},
        }
        if self.extra:
            out.update(self.extra)
        return out


def limits_from_settings(s: Settings) -> Limits:
    """The configured write limits (SPEC §15)."""
    return Limits(**dataclasses.asdict(s.write))


def idempotency_scope(binding: Binding, key: str) -> str:
    """The key's identity: subject, policy and actor (IDEM-1); generation is checked."""
    raw = json.dumps(
        [binding.subject, binding.policy, binding.actor_kind, binding.actor_id, key],
        separators=(",", ":"),
    )
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def write(
    deps: WriteDeps,
    binding: Binding,
    changes: list[Change],
    idempotency_key: str | None = None,
    *,
    defer_embedding: Callable[[str], bool] | None = None,
    jobs_for: Callable[[Sequence[NewRevision]], list[NewJob]] | None = None,
) -> WriteOutcome:
    """Commit a batch atomically, or replay its stored result.

    ``defer_embedding(text)`` true leaves that new head without an embedding
    (``indexing: pending``): a synchronous atomisation policy is about to archive
    it and embed its atoms instead (ATM-9). ``jobs_for(revisions)`` names the
    background jobs the batch causes; they are written in its transaction (the
    outbox, :mod:`graphsvc.store.jobs`), so they exist exactly when it commits.

    Raises:
        InvalidInputError, BudgetExceededError, TokenInvalidError, CasConflictError,
        DependencyInvalidError, IdempotencyConflictError, PurgePendingError,
        PermissionDeniedError: the batch is refused; nothing was written.
    """
    if idempotency_key is not None and not 1 <= len(idempotency_key) <= 256:
        raise InvalidInputError("idempotencyKey must be 1..256 characters")
    db = deps.db
    plan = validate_plan(changes, binding, deps.limits)
    claims, fingerprint = open_claims(deps.secret, binding, plan.changes)
    scope_key = idempotency_scope(binding, idempotency_key) if idempotency_key else None
    if scope_key is not None:
        found = find_idempotency(db, scope_key)
        if found is not None and found.state != "pending":
            return _replay(db, binding, found, fingerprint)
    now = deps.clock()
    check_live_tokens(db, deps.secret, binding, plan.changes, claims, now)
    req, to_embed = build_request(
        db,
        deps.tokenizer,
        binding,
        plan.changes,
        claims,
        fingerprint,
        scope_key,
        now,
        defer_embedding,
    )
    embed_into(deps.embedder, req, to_embed)
    extract_into(deps.extractor, req)
    if jobs_for is not None:
        req.jobs = jobs_for(req.revisions)
    replay = commit_write(db, req)
    if replay is not None:
        return _replay(db, binding, replay, fingerprint)
    refs = {cid: AtomRef(r["atomId"], r["rev"]) for cid, r in req.result.items()}
    views = load_views(db, binding.subject, refs.values())
    return WriteOutcome(
        operation_id=req.operation_id,
        repeated=False,
        indexing="complete"
        if all(r["embedding"] is not None for r in req.revisions if r["current"])
        else "pending",
        changes={cid: views[ref] for cid, ref in refs.items()},
    )


def open_claims(
    secret: bytes, binding: Binding, changes: tuple[Change, ...]
) -> tuple[dict[str, TokenClaims], str]:
    """The InputTokens' claims (MAC and scope checked, not expiry) and the plan's fingerprint.

    Raises:
        TokenInvalidError: a token is forged or of another scope (TOK-3).
    """
    claims: dict[str, TokenClaims] = {}
    for change in changes:
        if change.input:
            claims[change.id] = open_token(
                secret, binding, change.input, now=None, change_id=change.id
            )
    fingerprint = plan_fingerprint(changes, {cid: c.inputs_digest for cid, c in claims.items()})
    return claims, fingerprint


def check_live_tokens(
    db: Database,
    secret: bytes,
    binding: Binding,
    changes: tuple[Change, ...],
    claims: dict[str, TokenClaims],
    now: float,
) -> None:
    """A first commit needs unexpired tokens whose inputs still exist (IDEM-4, TOK-3).

    Raises:
        TokenInvalidError: a token expired or its inputs were purged.
    """
    for change in changes:
        if change.input:
            open_token(secret, binding, change.input, now=now, change_id=change.id)
    check_tokens_exist(
        db,
        binding.subject,
        (c.token_id for c in claims.values()),
        {c.token_id: cid for cid, c in claims.items()},
    )


def check_replay(found: Replay, binding: Binding, fingerprint: str) -> dict[str, AtomRef]:
    """IDEM-2/3/5: the refs of a stored result that may be replayed for this plan.

    Raises:
        DependencyInvalidError: the result was purged (IDEM-5).
        IdempotencyConflictError: the key was used for another plan (IDEM-3).
        PermissionDeniedError: the key belongs to an earlier authorisation generation.
    """
    if found.state == "purged" or found.result is None:
        raise DependencyInvalidError(
            "the result of this idempotencyKey was purged; it is not replayed (IDEM-5)"
        )
    if found.fingerprint != fingerprint:
        raise IdempotencyConflictError("this idempotencyKey was used for a different plan (IDEM-3)")
    if found.auth_generation is not None and found.auth_generation != binding.auth_generation:
        raise PermissionDeniedError(
            "this idempotencyKey belongs to an earlier authorisation generation"
        )
    return {cid: AtomRef(r["atomId"], r["rev"]) for cid, r in found.result.items()}


def _replay(db: Database, binding: Binding, found: Replay, fingerprint: str) -> WriteOutcome:
    """IDEM-2/IDEM-5: the stored result, re-checked against authorisation and purge."""
    refs = check_replay(found, binding, fingerprint)
    views = load_views(db, binding.subject, refs.values())
    missing = [cid for cid, ref in refs.items() if ref not in views]
    if missing:
        raise DependencyInvalidError(
            "the result of this idempotencyKey is no longer readable (IDEM-5)",
            details={"changeIds": sorted(missing)},
        )
    return WriteOutcome(
        operation_id=found.operation_id,
        repeated=True,
        indexing="complete",
        changes={cid: views[ref] for cid, ref in refs.items()},
    )


def embed_into(embedder: Embedder, req: WriteRequest, to_embed: list[tuple[int, str]]) -> None:
    """Fill the embeddings of the new heads ``build_request`` listed, in one embed call."""
    if to_embed:
        vectors = embedder.embed([t for _, t in to_embed])
        for (index, _), vec in zip(to_embed, vectors, strict=True):
            req.revisions[index]["embedding"] = vec


def extract_into(extractor: EntityExtractor | None, req: WriteRequest) -> None:
    """The entity mentions of the new current heads (none when the index is off)."""
    if extractor is None:
        return
    heads = [r for r in req.revisions if r["current"]]
    found = extractor.extract([str(r["text"]) for r in heads])
    req.extractor = extractor.version
    req.mentions = [
        head_mentions(r["atomId"], r["rev"], m) for r, m in zip(heads, found, strict=True)
    ]


@dataclass
class _Batch:
    """The transaction's lists, filled change by change (see :func:`build_request`)."""

    revisions: list[NewRevision] = field(default_factory=list)
    retires: list[RetireCopy] = field(default_factory=list)
    observed: list[NewLink] = field(default_factory=list)
    logical: list[NewLink] = field(default_factory=list)
    refs: list[RequiredRef] = field(default_factory=list)
    cites: list[NewCitation] = field(default_factory=list)
    gens: list[NewGeneration] = field(default_factory=list)
    to_embed: list[tuple[int, str]] = field(default_factory=list)

    def add_retire(self, change: Change, ref: AtomRef) -> None:
        assert change.target is not None
        self.revisions.append(
            new_revision(
                ref, change.id, state="retired", text="", current=False, tokens=None, sources=None
            )
        )
        self.retires.append({"atomId": ref.atom_id, "fromRev": change.target.rev, "toRev": ref.rev})

    def add_content(
        self,
        change: Change,
        ref: AtomRef,
        heads: dict[str, int],
        tokenizer: Tokenizer,
        embed_now: bool,
    ) -> None:
        assert change.text is not None and change.sources is not None
        sources_json, change_cites, change_refs = _citations(change, ref, heads)
        self.cites.extend(change_cites)
        self.refs.extend(change_refs)
        if embed_now:
            self.to_embed.append((len(self.revisions), change.text))
        self.revisions.append(
            new_revision(
                ref,
                change.id,
                state="active",
                text=change.text,
                current=True,
                tokens=tokenizer.count(change.text),
                sources=sources_json,
            )
        )

    def add_links(self, change: Change, ref: AtomRef, assigned: dict[str, AtomRef]) -> None:
        for ordinal, link in enumerate(change.links or ()):
            if link.local is not None:
                target = assigned[link.local]
            else:
                assert link.ref is not None
                target = link.ref
                self.refs.append(
                    {
                        "atomId": target.atom_id,
                        "rev": target.rev,
                        "changeId": change.id,
                        "wantText": False,
                    }
                )
            item: NewLink = {
                "srcAtomId": ref.atom_id,
                "srcRev": ref.rev,
                "atomId": target.atom_id,
                "rev": target.rev,
                "role": link.role,
                "required": link.required,
                "orderKey": link.order_key,
                "ordinal": ordinal,
            }
            (self.logical if link.at == "logical" else self.observed).append(item)

    def add_generation(self, change: Change, ref: AtomRef, claim: TokenClaims) -> None:
        self.gens.append(
            {
                "atomId": ref.atom_id,
                "rev": ref.rev,
                "tokenId": claim.token_id,
                "kind": "decided" if change.op == "retire" else "generated",
            }
        )


def _assign(
    changes: tuple[Change, ...],
) -> tuple[dict[str, AtomRef], list[str], dict[str, tuple[str, int]]]:
    """Each change's new revision, the new atoms' ids, and the CAS of revise/retire."""
    assigned: dict[str, AtomRef] = {}
    new_ids: list[str] = []
    cas: dict[str, tuple[str, int]] = {}
    for change in changes:
        if change.op == "create":
            atom_id = uuid.uuid4().hex
            new_ids.append(atom_id)
            assigned[change.id] = AtomRef(atom_id, 1)
        else:
            assert change.target is not None
            assigned[change.id] = AtomRef(change.target.atom_id, change.target.rev + 1)
            cas[change.target.atom_id] = (change.id, change.target.rev)
    return assigned, new_ids, cas


def build_request(
    db: Database,
    tokenizer: Tokenizer,
    binding: Binding,
    changes: tuple[Change, ...],
    claims: dict[str, TokenClaims],
    fingerprint: str,
    scope_key: str | None,
    now: float,
    defer_embedding: Callable[[str], bool] | None = None,
) -> tuple[WriteRequest, list[tuple[int, str]]]:
    """The transaction's input for a validated plan, and the texts still to embed.

    Resolves local targets, citations of stored atoms (checked against their text)
    and provenance; ``to_embed`` lists ``(revision index, text)`` of the new heads,
    which :func:`embed_into` fills (the bulk import does that on another thread).

    Raises:
        DependencyInvalidError, InvalidInputError: a cited atom is missing or a
            range/digest does not match its text.
    """
    assigned, new_ids, cas = _assign(changes)
    heads = _head_revs_for_unversioned_sources(db, binding, changes)
    batch = _Batch()
    for change in changes:
        ref = assigned[change.id]
        if change.op == "retire":
            batch.add_retire(change, ref)
        else:
            assert change.text is not None
            embed_now = defer_embedding is None or not defer_embedding(change.text)
            batch.add_content(change, ref, heads, tokenizer, embed_now)
            batch.add_links(change, ref, assigned)
        claim = claims.get(change.id)
        if claim is not None:
            batch.add_generation(change, ref, claim)
    _verify_store_citations(db, binding, batch.cites, batch.revisions)
    for r in batch.refs:
        r["wantText"] = False
    req = WriteRequest(
        subject=binding.subject,
        policy=binding.policy,
        actor_kind=binding.actor_kind,
        actor_id=binding.actor_id,
        auth_generation=binding.auth_generation,
        operation_id=uuid.uuid4().hex,
        now=datetime.fromtimestamp(now, UTC).isoformat(),
        fingerprint=fingerprint,
        scope_key=scope_key,
        new_atom_ids=new_ids,
        cas=cas,
        revisions=batch.revisions,
        retires=batch.retires,
        links_observed=batch.observed,
        links_logical=batch.logical,
        refs=batch.refs,
        cites=batch.cites,
        gens=batch.gens,
        token_ids=sorted({c.token_id for c in claims.values()}),
        result={cid: ref.to_json() for cid, ref in assigned.items()},
    )
    return req, batch.to_embed


def _verify_store_citations(
    db: Database,
    binding: Binding,
    cites: list[NewCitation],
    revisions: list[NewRevision],
) -> None:
    """Check ranges/digests of citations of stored atoms against the cited text.

    Revisions are immutable, so reading them before the transaction is safe; the
    transaction re-checks that they still exist (a purge in between is caught).
    """
    wanted = {(c["storeRef"]["atomId"], c["storeRef"]["rev"]) for c in cites if c["storeRef"]}
    if not wanted:
        return
    found = find_revisions(
        db, binding.subject, [AtomRef(a, r) for a, r in sorted(wanted)], with_text=True
    )
    texts = {(f.atom_id, f.rev): (f.text or "", f.digest or "") for f in found if f.found}
    by_rev = {(r["atomId"], r["rev"]): r for r in revisions}
    for cite in cites:
        store_ref = cite["storeRef"]
        if store_ref is None:
            continue
        key = (store_ref["atomId"], store_ref["rev"])
        if key not in texts:
            raise DependencyInvalidError(
                f"change {cite['changeId']!r}: cited atom:{key[0]} rev {key[1]} does not exist",
                details={"changeId": cite["changeId"]},
            )
        text, digest = texts[key]
        check_range(text, digest, cite, change_id=cite["changeId"])
        cite["verified"] = True
        rev = by_rev[(cite["srcAtomId"], cite["srcRev"])]
        public = json.loads(rev["sources"] or "[]")
        public[cite["ordinal"]]["verified"] = True
        rev["sources"] = json.dumps(public, sort_keys=True)


def _head_revs_for_unversioned_sources(
    db: Database, binding: Binding, changes: tuple[Change, ...]
) -> dict[str, int]:
    """``atom:<id>`` citations without a version cite the head at write time."""
    ids = sorted(
        {
            atom_id
            for c in changes
            for s in c.sources or ()
            if s.version is None and (atom_id := parse_store_uri(s.uri)) is not None
        }
    )
    if not ids:
        return {}
    return head_revs(db, binding.subject, ids)


def _citations(
    change: Change, ref: AtomRef, heads: dict[str, int]
) -> tuple[str, list[NewCitation], list[RequiredRef]]:
    cites: list[NewCitation] = []
    refs: list[RequiredRef] = []
    public: list[dict[str, Any]] = []
    for ordinal, src in enumerate(change.sources or ()):
        version = src.version
        store_ref: StoreRef | None = None
        atom_id = parse_store_uri(src.uri)
        if atom_id is not None:
            if version is None:
                if atom_id not in heads:
                    raise DependencyInvalidError(
                        f"change {change.id!r}: cited {src.uri} does not exist",
                        details={"changeId": change.id},
                    )
                version = str(heads[atom_id])
            if not version.isdigit() or int(version) < 1:
                raise InvalidInputError(
                    f"change {change.id!r}: the version of an atom: source is its rev number",
                    details={"changeId": change.id},
                )
            store_ref = {"atomId": atom_id, "rev": int(version)}
            refs.append(
                {"atomId": atom_id, "rev": int(version), "changeId": change.id, "wantText": True}
            )
        item: NewCitation = {
            "srcAtomId": ref.atom_id,
            "srcRev": ref.rev,
            "changeId": change.id,
            "ordinal": ordinal,
            "uri": src.uri,
            "version": version,
            "digest": src.digest,
            "sourceKey": source_key(src.uri, version, src.digest),
            "start": src.range.start if src.range else None,
            "end": src.range.end if src.range else None,
            "unit": src.range.unit if src.range else None,
            "verified": False,
            "storeRef": store_ref,
        }
        cites.append(item)
        view: dict[str, Any] = {"uri": src.uri, "verified": False}
        if version is not None:
            view["version"] = version
        if src.digest is not None:
            view["digest"] = src.digest
        if src.range is not None:
            view["range"] = src.range.to_json()
        public.append(view)
    return json.dumps(public, sort_keys=True), cites, refs
