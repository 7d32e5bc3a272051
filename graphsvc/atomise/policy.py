"""Namespace policy for automatic atomisation (ATM-7, ATM-8, ATM-9).

A namespace is a subject + policy name. Its policy is stored as
``(:NamespacePolicy {subject, policy, json})`` and is **off by default**::

    {"auto_atomise": false,                      # legacy boolean (true = deferred)
     "auto_atomise_mode": "deferred" | "synchronous",   # absent -> the boolean
     "auto_atomise_threshold_cl100k": 500,        # atoms with more tokens are atomised
     "auto_atomise_max_atom_tokens": 200,         # [50, 1000]
     "auto_atomise_max_retries": 1}               # synchronous only; deferred uses 3

:func:`after_write` runs after a write committed. For every created or revised
active atom over the threshold it either atomises it inside the request
(synchronous: the outcome gains ``atomiseMode`` and ``atomiseOutcome``) or hands it
to the background worker (deferred: the outcome gains ``atomiseMode: deferred``).
It never fails the write that already committed: a failure becomes
``atomiseOutcome: failed`` (synchronous) or a log line (deferred).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from graphsvc.atomise.token_budget import DEFAULT_ATOM_TOKENS, MAX_ATOM_TOKENS, MIN_ATOM_TOKENS
from graphsvc.atomise.usecase import AtomiseDeps, atomise, outcome_word
from graphsvc.core.binding import Binding
from graphsvc.core.write_models import AtomView
from graphsvc.errors import GraphsvcError, InvalidInputError, PermissionDeniedError
from graphsvc.ops.write import WriteOutcome
from graphsvc.store.atomise import embed_head
from graphsvc.store.connection import Database
from graphsvc.store.jobs import NewJob
from graphsvc.store.policy import load_policy, save_policy
from graphsvc.store.views import load_views
from graphsvc.store.write_steps import NewRevision
from graphsvc.tokenizer import Tokenizer

__all__ = [
    "DEFAULT_THRESHOLD",
    "SYNC_DEFAULT_RETRIES",
    "NamespacePolicy",
    "after_write",
    "embedding_deferral",
    "get_namespace_policy",
    "jobs_for",
    "outcome_word",
    "parse_policy",
    "set_namespace_policy",
]

log = logging.getLogger("graphsvc.atomise")

DEFAULT_THRESHOLD: Final = 500
# ATM-7: synchronous mode allows 1 retry unless the namespace overrides it.
SYNC_DEFAULT_RETRIES: Final = 1

Mode = Literal["deferred", "synchronous"]


class NamespacePolicy(BaseModel):
    """A namespace's auto-atomise policy (validated once, at ``setNamespacePolicy``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    auto_atomise: bool = False
    auto_atomise_mode: Mode | None = None
    auto_atomise_threshold_cl100k: int = Field(default=DEFAULT_THRESHOLD, ge=1, le=10_000_000)
    auto_atomise_max_atom_tokens: int = Field(
        default=DEFAULT_ATOM_TOKENS, ge=MIN_ATOM_TOKENS, le=MAX_ATOM_TOKENS
    )
    auto_atomise_max_retries: int | None = Field(default=None, ge=0, le=10)

    @property
    def mode(self) -> Mode | None:
        """The resolved mode: the explicit mode, else the legacy boolean (deferred)."""
        if self.auto_atomise_mode is not None:
            return self.auto_atomise_mode
        return "deferred" if self.auto_atomise else None

    @property
    def sync_retries(self) -> int:
        if self.auto_atomise_max_retries is None:
            return SYNC_DEFAULT_RETRIES
        return self.auto_atomise_max_retries

    def to_json(self) -> dict[str, Any]:
        out = self.model_dump()
        out["resolvedMode"] = self.mode
        return out


def parse_policy(raw: Any) -> NamespacePolicy:
    """Validate a policy document (flat, or wrapped as ``{"governance": {...}}``).

    Raises:
        InvalidInputError: unknown field, wrong type or value out of range.
    """
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            raise InvalidInputError("policy must be a JSON object") from exc
    if isinstance(raw, dict) and set(raw) == {"governance"}:
        raw = raw["governance"]
    if not isinstance(raw, dict):
        raise InvalidInputError("policy must be a JSON object")
    try:
        return NamespacePolicy.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "policy"
        raise InvalidInputError(f"invalid namespace policy: {where}: {first['msg']}") from exc


def set_namespace_policy(
    db: Database, clock: Callable[[], float], binding: Binding, raw: Any
) -> NamespacePolicy:
    """Store the caller's namespace policy (human operators only).

    Returns:
        The stored policy with defaults filled in (its ``to_json`` adds ``resolvedMode``).

    Raises:
        PermissionDeniedError: the caller is not a human actor.
        InvalidInputError: the policy does not validate.
    """
    if binding.actor_kind != "human":
        raise PermissionDeniedError("only a human operator sets a namespace policy")
    policy = parse_policy(raw)
    save_policy(
        db,
        binding.subject,
        binding.policy,
        policy.model_dump(),
        now=datetime.fromtimestamp(clock(), UTC).isoformat(),
        actor_id=binding.actor_id,
    )
    return policy


def get_namespace_policy(db: Database, binding: Binding) -> NamespacePolicy:
    """The caller's namespace policy (the all-off default when none is stored)."""
    doc = load_policy(db, binding.subject, binding.policy)
    if doc is None:
        return NamespacePolicy()
    return NamespacePolicy.model_validate(doc)


def embedding_deferral(
    curator: str, tokenizer: Tokenizer, policy: NamespacePolicy
) -> Callable[[str], bool] | None:
    """ATM-9: in synchronous mode the write skips the embedding of a source that is
    about to be atomised (its atoms are embedded instead); None in any other mode."""
    if policy.mode != "synchronous" or curator == "none":
        return None
    threshold = policy.auto_atomise_threshold_cl100k
    return lambda text: tokenizer.count(text) > threshold


def jobs_for(
    curator: str, policy: NamespacePolicy, *, owner: str, lease_until: float
) -> Callable[[Sequence[NewRevision]], list[NewJob]] | None:
    """The background jobs a write under ``policy`` causes (written in its transaction).

    Deferred mode: one ``atomise`` job per new active head over the threshold.
    Synchronous mode: one ``embed`` job per head whose embedding is deferred, so
    that a process dying during the atomisation leaves the head to be embedded.
    Both are held by ``owner`` (this process's worker) until ``lease_until``; a
    crash leaves them to any worker after that. None when nothing can be caused
    (no automatic atomisation, or no curator: ATM-4).
    """
    mode = policy.mode
    if mode is None or curator == "none":
        return None
    threshold = policy.auto_atomise_threshold_cl100k

    def plan(revisions: Sequence[NewRevision]) -> list[NewJob]:
        return [
            NewJob(
                jobId=uuid.uuid4().hex,
                kind="atomise" if mode == "deferred" else "embed",
                atomId=r["atomId"],
                rev=r["rev"],
                maxAtomTokens=policy.auto_atomise_max_atom_tokens,
                leaseOwner=owner,
                leaseUntil=lease_until,
            )
            for r in revisions
            if r["current"]
            and r["state"] == "active"
            and (r["tokens"] or 0) > threshold
            and (mode == "deferred" or r["embedding"] is None)
        ]

    return plan


def after_write(
    deps: AtomiseDeps,
    binding: Binding,
    outcome: WriteOutcome,
    policy: NamespacePolicy | None = None,
    *,
    jobs: Sequence[NewJob] = (),
    submit: Callable[[list[str]], object] = lambda _ids: None,
    finish: Callable[[list[str], str], object] = lambda _ids, _word: None,
) -> WriteOutcome:
    """Apply the namespace policy to a committed write (see the module docstring).

    ``jobs`` are the background jobs the write committed (:func:`jobs_for`):
    deferred mode hands their ids to the worker (``submit``); synchronous mode
    records its ``embed`` jobs as ended (``finish``) once it has atomised or
    embedded their heads itself.

    Never raises: the write has committed, and its outcome is returned in any case.
    """
    if outcome.repeated:
        return outcome
    try:
        if policy is None:
            policy = get_namespace_policy(deps.db, binding)
        mode = policy.mode
        if mode is None:
            return outcome
        threshold = policy.auto_atomise_threshold_cl100k
        candidates = [
            (cid, view)
            for cid, view in outcome.changes.items()
            if view.state == "active" and deps.tokenizer.count(view.text) > threshold
        ]
        if not candidates:
            return outcome
        if deps.config.curator == "none":
            extra = {"atomiseMode": mode, "atomiseOutcome": "skipped_tier_locked"}
        elif mode == "deferred":
            submit([j["jobId"] for j in jobs if j["kind"] == "atomise"])
            extra = {"atomiseMode": "deferred"}
        else:
            done = _synchronous(deps, binding, outcome, policy, candidates)
            finish([j["jobId"] for j in jobs if j["kind"] == "embed"], "done_in_request")
            return done
    except Exception:  # the write committed; a policy problem must not hide that
        log.exception("auto-atomise policy could not be applied")
        return outcome
    return dataclasses.replace(outcome, extra={**(outcome.extra or {}), **extra})


def _synchronous(
    deps: AtomiseDeps,
    binding: Binding,
    outcome: WriteOutcome,
    policy: NamespacePolicy,
    candidates: list[tuple[str, AtomView]],
) -> WriteOutcome:
    details: dict[str, dict[str, Any]] = {}
    for cid, view in candidates:
        try:
            result = atomise(
                deps,
                binding,
                view.atom_id,
                max_atom_tokens=policy.auto_atomise_max_atom_tokens,
                retries=policy.sync_retries,
            )
            details[cid] = {"outcome": outcome_word(result), "atomIds": list(result.atom_ids)}
        except GraphsvcError as exc:
            log.warning("synchronous atomisation of %s failed: %s", view.atom_id, exc.message)
            details[cid] = {"outcome": "failed", "error": exc.code, "message": exc.message}
    words = [d["outcome"] for d in details.values()]
    if "failed" in words:
        word = "failed"
    elif "atomised" in words:
        word = "atomised"
    else:
        word = words[0]
    changes = dict(outcome.changes)
    atomised = [v.ref for cid, v in candidates if details[cid]["outcome"] == "atomised"]
    _embed_deferred_heads(
        deps, binding, [v for cid, v in candidates if details[cid]["outcome"] != "atomised"]
    )
    if atomised:
        # The committed revisions are no longer heads: show them as they now are.
        fresh = load_views(deps.db, binding.subject, atomised)
        changes = {cid: fresh.get(v.ref, v) for cid, v in changes.items()}
    extra = {"atomiseMode": "synchronous", "atomiseOutcome": word, "atomiseDetails": details}
    return dataclasses.replace(
        outcome,
        changes=changes,
        indexing="complete",
        extra={**(outcome.extra or {}), **extra},
    )


def _embed_deferred_heads(deps: AtomiseDeps, binding: Binding, views: list[AtomView]) -> None:
    """Embed the sources whose embedding was deferred but that were not atomised."""
    if not views:
        return
    vectors = deps.embedder.embed([v.text for v in views])
    for view, vec in zip(views, vectors, strict=True):
        embed_head(deps.db, binding.subject, view.ref, vec)
