"""The ``atomise`` use case (SPEC §11 ATM-1 … ATM-10, §12 SIG-1/SIG-2).

A host-layer operation: it uses the core like any host would.

Order of work, cheapest refusal first:

1. Tier (ATM-4): with no curator configured → TIER_LOCKED, before any database read.
2. Arguments (budget in [50, 1000], retries ≥ 0) and the configured governance hooks.
3. The parent's head (NOT_FOUND, retired → INVALID_INPUT), its nesting depth
   (DEPTH_EXCEEDED past :data:`MAX_ATOM_DEPTH`), already atomised (informational
   unless ``force``), already within one atom's budget (``source_too_small``).
4. The signing key ring (SIGNER_ERROR), the curator (CURATOR_FAILED), the budget
   (ATM-5; fewer than 2 survivors → ``source_too_small``).
5. ``pre_store`` hooks for every atom (a refusal writes nothing at all).
6. Embeddings of the atoms, then ``observe`` of the parent (basis = the parent
   revision, sources = its sources, payloadDigest = SHA-256 of the curator output):
   the atoms' generation input, so purging the parent purges its atoms.
7. ONE Neo4j transaction (ATM-2, :mod:`graphsvc.atomise.transaction`): atoms,
   signed lineage, the parent's archive revision and the ``atomisation_complete``
   event. If anything fails the transaction rolls back and the Input record of step 6
   is discarded, so a refusal leaves nothing behind.

Hooks may run more than once when the driver retries a transient failure; they must
be pure judgements of ``(index, text)``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from graphsvc.atomise.curators import Curator, LlmCurator, RuleCurator
from graphsvc.atomise.hooks import AtomiseHooks, hook_chain, run_hooks
from graphsvc.atomise.token_budget import (
    DEFAULT_ATOM_TOKENS,
    SOURCE_TOO_SMALL,
    BudgetOutcome,
    apply_budget,
    source_within_budget,
    validate_max_atom_tokens,
)
from graphsvc.atomise.transaction import (
    EVENT_ATOMISATION_COMPLETE,
    AtomisePlan,
    canonical_json,
    commit_atomisation,
    event_from_row,
)
from graphsvc.core.binding import Binding
from graphsvc.core.input_bounds import excerpt
from graphsvc.core.signing import SignableLink, format_signed_at, sign_link
from graphsvc.embed import Embedder
from graphsvc.entities import EntityExtractor
from graphsvc.errors import (
    DepthExceededError,
    InvalidInputError,
    NotFoundError,
    StoreError,
    TierLockedError,
)
from graphsvc.inputs.models import parse_host_input
from graphsvc.keys.signing_keys import KeyRing
from graphsvc.ops.input_tokens import TokenClaims, open_token
from graphsvc.ops.observe import observe
from graphsvc.settings import AtomiseSettings, Settings
from graphsvc.store.atomise import AtomiseSource, discard_input, read_source
from graphsvc.store.connection import Database
from graphsvc.store.jobs import JobHold
from graphsvc.tokenizer import Tokenizer

__all__ = [
    "EVENT_ATOMISATION_COMPLETE",
    "MAX_ATOM_DEPTH",
    "AtomiseDeps",
    "AtomiseHooks",
    "AtomiseOutcome",
    "atomise",
    "build_curator",
    "canonical_json",
    "event_from_row",
    "outcome_word",
    "payload_sha256",
    "require_curator_tier",
]

# Atoms may nest 3 levels below an original memory; atomising an atom that is
# already 3 levels deep would nest deeper (ATM-5 depth_exceeded).
MAX_ATOM_DEPTH: Final = 3


@dataclass(frozen=True)
class AtomiseOutcome:
    """What one ``atomise`` call did.

    Attributes:
        source_id: the parent atom.
        atom_ids: the atoms of this atomisation (or of the earlier one when
            ``already_atomised``); empty when the source was too small.
        archived_at: when the parent was archived (None when nothing happened).
        already_atomised: the parent was atomised before and ``force`` was not set.
        reason: ``"source_too_small"`` when nothing was atomised for that reason.
        source_rev: the parent revision the atoms derive from.
        archive_rev: the parent's new archive revision.
        dropped_count: curator atoms dropped by the budget (ATM-5).
        truncated_count: surviving atoms cut because there were more than 10.
        warnings: kept atoms that were up to 25% over budget.
        event_sequence: the sequence of the ``atomisation_complete`` event.
        operation_id: the operation record of the transaction.
    """

    source_id: str
    atom_ids: tuple[str, ...] = ()
    archived_at: str | None = None
    already_atomised: bool = False
    reason: str | None = None
    source_rev: int | None = None
    archive_rev: int | None = None
    dropped_count: int = 0
    truncated_count: int = 0
    warnings: tuple[str, ...] = ()
    event_sequence: int | None = None
    operation_id: str | None = None

    @property
    def atom_count(self) -> int:
        return len(self.atom_ids)

    @property
    def informational(self) -> bool:
        """True when nothing new was atomised (already atomised / source too small)."""
        return self.already_atomised or self.reason is not None

    def to_json(self) -> dict[str, Any]:
        """ATM-8: ``{sourceId, atomIds, atomCount, archivedAt}`` or
        ``{alreadyAtomised: true, atomIds}``, plus additive facts."""
        if self.already_atomised:
            return {
                "alreadyAtomised": True,
                "sourceId": self.source_id,
                "atomIds": list(self.atom_ids),
                "atomCount": self.atom_count,
                "archivedAt": self.archived_at,
            }
        out: dict[str, Any] = {
            "sourceId": self.source_id,
            "atomIds": list(self.atom_ids),
            "atomCount": self.atom_count,
            "archivedAt": self.archived_at,
            "droppedCount": self.dropped_count,
            "truncatedCount": self.truncated_count,
            "warnings": list(self.warnings),
        }
        if self.reason is not None:
            out["informational"] = self.reason
        else:
            out.update(
                sourceRev=self.source_rev,
                archiveRev=self.archive_rev,
                eventSequence=self.event_sequence,
                operationId=self.operation_id,
            )
        return out


# =========================================================================== wiring


@dataclass(frozen=True)
class AtomiseDeps:
    """What an atomisation uses: the store, the models, the token secret, time, its
    settings (curator, hooks), the InputTokens' lifetime and the loader of the signing
    key ring (:meth:`graphsvc.runtime.Parts.signing_keys`: it creates the ring on first
    use, mode 0600)."""

    db: Database
    embedder: Embedder
    tokenizer: Tokenizer
    secret: bytes
    clock: Callable[[], float]
    config: AtomiseSettings
    token_lifetime_s: float
    signing_keys: Callable[[], KeyRing]
    # The entity extractor (SPEC §16); None: the entity index is off.
    extractor: EntityExtractor | None = None


def _require_tier(curator: str) -> None:
    if curator == "none":
        raise TierLockedError(
            "atomisation needs a curator: set GRAPHSVC_CURATOR=rule or ollama "
            "(this service runs at keyword tier)"
        )


def require_curator_tier(settings: Settings) -> None:
    """ATM-4: keyword tier (no curator) refuses atomisation. Reads nothing.

    Raises:
        TierLockedError: ``settings.atomise.curator`` is ``none``.
    """
    _require_tier(settings.atomise.curator)


def build_curator(config: AtomiseSettings, retries: int) -> Curator:
    """The curator the configuration names (ATM-3); ``retries`` applies to the LLM curator.

    Raises:
        TierLockedError: no curator is configured.
        InvalidInputError: the Ollama URL or model is invalid.
    """
    _require_tier(config.curator)
    if config.curator == "rule":
        return RuleCurator()
    return LlmCurator(config.ollama_url, model=config.ollama_model, max_retries=retries)


def outcome_word(outcome: AtomiseOutcome) -> str:
    """``atomised`` or ``skipped_<reason>`` (ATM-9)."""
    if outcome.already_atomised:
        return "skipped_already_atomised"
    if outcome.reason is not None:
        return f"skipped_{outcome.reason}"
    return "atomised"


# =========================================================================== use case


def atomise(
    deps: AtomiseDeps,
    binding: Binding,
    atom_id: str,
    *,
    force: bool = False,
    max_atom_tokens: int | None = None,
    retries: int = 3,
    hooks: AtomiseHooks | None = None,
    job: JobHold | None = None,
) -> AtomiseOutcome:
    """Split an atom into 2–10 atoms with signed lineage; archive the parent.

    Args:
        deps: the store, embedder, tokenizer, token secret, clock and configuration.
        binding: the caller; atoms carry its actor kind and id.
        atom_id: the parent atom (its head revision is atomised).
        force: re-atomise an atomised parent from its archived head (ATM-10).
        max_atom_tokens: per-atom budget in [50, 1000]; default 200.
        retries: LLM curator retries after the first attempt (ATM-7).
        hooks: governance hooks, run after the configured ones.
        job: the background job this atomisation runs for; an atomisation that
            commits records the job ``done`` in its own transaction.

    Returns:
        The outcome; ``informational`` when already atomised or too small.

    Raises:
        TierLockedError: no curator configured (before any database read).
        InvalidInputError: budget/retries out of range, retired parent, bad hooks.
        NotFoundError: no such atom in the caller's subject.
        DepthExceededError: the parent is already nested :data:`MAX_ATOM_DEPTH` deep.
        SignerError: the signing key cannot be used.
        CuratorFailedError: the curator gave no usable answer.
        GovernanceRefusedError: a hook refused an atom (``details.atomIndex``).
        CasConflictError: the parent's head moved while it was being atomised.
        PurgePendingError: a purge in the subject has not finished.
        StoreError: Neo4j failed; nothing was committed.
    """
    config = deps.config
    budget, chain = _check_arguments(config, max_atom_tokens, retries, hooks)
    source = _read_source(deps.db, binding, atom_id)
    early = _nothing_to_atomise(source, budget, force=force)
    if early is not None:
        return early

    ring = deps.signing_keys()
    budgeted = apply_budget(build_curator(config, retries).curate(source.text, budget), budget)
    if budgeted.reason is not None:
        return AtomiseOutcome(
            source_id=atom_id,
            reason=budgeted.reason,
            source_rev=source.rev,
            dropped_count=budgeted.dropped_count,
            warnings=tuple(budgeted.warnings),
        )
    texts = budgeted.kept
    for index, text in enumerate(texts):
        run_hooks(chain, "pre_store", index, text)

    vectors = deps.embedder.embed(texts)
    payload_digest = payload_sha256(texts)
    claims = _observe_parent(deps, binding, source, payload_digest)
    plan = _plan(
        deps,
        binding,
        source,
        ring,
        budgeted,
        vectors,
        claims,
        force=force,
        budget=budget,
        payload_digest=payload_digest,
        hooks=chain,
    )
    sequence = _commit(deps, binding, plan, texts, claims.token_id, job)
    return _atomised(plan, budgeted, sequence)


def _commit(
    deps: AtomiseDeps,
    binding: Binding,
    plan: AtomisePlan,
    texts: list[str],
    token_id: str,
    job: JobHold | None,
) -> int:
    """Commit ``plan`` with the atoms' entity mentions and the job's end; the sequence.

    A failed commit also discards the parent's observation (``token_id``): nothing else
    holds its token but this atomisation.
    """
    plan.job = job
    if deps.extractor is not None:
        plan.extractor = deps.extractor.version
        plan.mentions = deps.extractor.extract(texts)
    try:
        return commit_atomisation(deps.db, plan)
    except BaseException:
        _discard_input(deps.db, binding, token_id)
        raise


def _atomised(plan: AtomisePlan, budgeted: BudgetOutcome, sequence: int) -> AtomiseOutcome:
    """The outcome of a committed atomisation."""
    return AtomiseOutcome(
        source_id=plan.source_id,
        atom_ids=tuple(plan.atom_ids),
        archived_at=plan.signed_at,
        source_rev=plan.source_rev,
        archive_rev=plan.source_rev + 1,
        dropped_count=budgeted.dropped_count,
        truncated_count=budgeted.truncated_count,
        warnings=tuple(budgeted.warnings),
        event_sequence=sequence,
        operation_id=plan.operation_id,
    )


def _check_arguments(
    config: AtomiseSettings, max_atom_tokens: int | None, retries: int, hooks: AtomiseHooks | None
) -> tuple[int, list[AtomiseHooks]]:
    """The tier (first, ATM-4), the budget and retries, and the hooks to run.

    Raises:
        TierLockedError: no curator is configured.
        InvalidInputError: budget or retries out of range; the configured hooks
            cannot be loaded.
    """
    _require_tier(config.curator)
    budget = validate_max_atom_tokens(
        DEFAULT_ATOM_TOKENS if max_atom_tokens is None else max_atom_tokens
    )
    if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= 10:
        raise InvalidInputError("retries must be an integer in [0, 10]")
    return budget, hook_chain(config.hooks, hooks)


def _nothing_to_atomise(
    source: AtomiseSource, budget: int, *, force: bool
) -> AtomiseOutcome | None:
    """The informational outcome when the parent is not atomised (ATM-5, ATM-10).

    Raises:
        InvalidInputError: the parent is retired.
        DepthExceededError: its atoms would nest deeper than :data:`MAX_ATOM_DEPTH`.
    """
    atom_id = source.atom_id
    if source.state == "retired":
        raise InvalidInputError(f"atom {atom_id} is retired; a retired atom is not atomised")
    if source.depth >= MAX_ATOM_DEPTH:
        raise DepthExceededError(
            f"atom {atom_id} is nested {source.depth} levels deep; its atoms would nest "
            f"deeper than {MAX_ATOM_DEPTH}",
            details={"depth": source.depth, "maxDepth": MAX_ATOM_DEPTH},
        )
    if source.atomised and not force:
        return AtomiseOutcome(
            source_id=atom_id,
            atom_ids=source.atom_ids,
            archived_at=source.archived_at,
            already_atomised=True,
            source_rev=source.rev,
        )
    if source_within_budget(source.text, budget):
        return AtomiseOutcome(source_id=atom_id, reason=SOURCE_TOO_SMALL, source_rev=source.rev)
    return None


def _observe_parent(
    deps: AtomiseDeps, binding: Binding, source: AtomiseSource, payload_digest: str
) -> TokenClaims:
    """``observe`` of the parent: the atoms' generation input (basis = the parent
    revision, sources = its sources, payloadDigest = the curator output's digest)."""
    host_input = parse_host_input(
        {
            "basis": [{"atomId": source.atom_id, "rev": source.rev}],
            "sources": [_citation_input(s) for s in source.sources],
            "payloadDigest": payload_digest,
        }
    )
    token = observe(deps.db, deps.secret, deps.clock, deps.token_lifetime_s, binding, host_input)
    return open_token(deps.secret, binding, token, now=None)


def _plan(
    deps: AtomiseDeps,
    binding: Binding,
    source: AtomiseSource,
    ring: KeyRing,
    budgeted: BudgetOutcome,
    vectors: list[list[float]],
    claims: TokenClaims,
    *,
    force: bool,
    budget: int,
    payload_digest: str,
    hooks: list[AtomiseHooks],
) -> AtomisePlan:
    """The transaction's input: new atom ids, signed lineage, the event payload."""
    texts = budgeted.kept
    moment = datetime.fromtimestamp(deps.clock(), UTC)
    signed_at = format_signed_at(moment)
    atom_ids = [uuid.uuid4().hex for _ in texts]
    operation_id = uuid.uuid4().hex
    return AtomisePlan(
        subject=binding.subject,
        binding=binding,
        source_id=source.atom_id,
        source_rev=source.rev,
        source_depth=source.depth,
        atom_ids=atom_ids,
        texts=texts,
        vectors=vectors,
        tokens=[deps.tokenizer.count(t) for t in texts],
        signatures=[
            sign_link(ring.active_seed, _link(binding.subject, aid, source, signed_at, ring))
            for aid in atom_ids
        ],
        key_id=ring.active_key_id,
        seed=ring.active_seed,
        token_id=claims.token_id,
        operation_id=operation_id,
        now_iso=moment.isoformat(),
        signed_at=signed_at,
        payload={
            "sourceId": source.atom_id,
            "sourceRev": source.rev,
            "archiveRev": source.rev + 1,
            "atomIds": atom_ids,
            "atomCount": len(atom_ids),
            "archivedAt": signed_at,
            "force": bool(force),
            "maxAtomTokens": budget,
            "curator": deps.config.curator,
            "payloadDigest": payload_digest,
            "droppedCount": budgeted.dropped_count,
            "truncatedCount": budgeted.truncated_count,
            "operationId": operation_id,
        },
        hooks=hooks,
    )


def _link(
    subject: str, atom_id: str, source: AtomiseSource, signed_at: str, ring: KeyRing
) -> SignableLink:
    return SignableLink(
        subject=subject,
        from_atom_id=atom_id,
        from_rev=1,
        to_atom_id=source.atom_id,
        to_rev=source.rev,
        signed_at=signed_at,
        key_id=ring.active_key_id,
    )


def _citation_input(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored public citation back into the SourceCitation input shape."""
    return {k: v for k, v in stored.items() if k in ("uri", "version", "digest", "range")}


def _read_source(db: Database, binding: Binding, atom_id: str) -> AtomiseSource:
    source = read_source(db, binding.subject, atom_id)
    if source is None:
        raise NotFoundError(
            f"atom {excerpt(atom_id)} does not exist", details={"atomId": excerpt(atom_id)}
        )
    return source


def _discard_input(db: Database, binding: Binding, token_id: str) -> None:
    # The record is auxiliary state (CORE-2) that nothing was written with; a
    # leftover is harmless, and the original failure is what the caller needs.
    with contextlib.suppress(StoreError):
        discard_input(db, binding.subject, token_id)


def payload_sha256(texts: Sequence[str]) -> str:
    """``sha256:<hex>`` of the curator output, as declared to ``observe``."""
    data = json.dumps(list(texts), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return "sha256:" + hashlib.sha256(data).hexdigest()
