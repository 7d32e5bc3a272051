"""``purge`` (SPEC §6, LNK-5, LNK-6): erase an atom and everything that depends on it.

**Who may purge.** Only a binding with the purge right (auth file entry
``"purge": true``, :attr:`Binding.may_purge`) whose actor kind is ``human`` or
``input-adapter``. An ``agent`` may never purge, whatever its auth entry says.
Anything else is PERMISSION_DENIED, checked before the database is touched. The
CLI acts as a local operator and always has the right.

**What is purged (LNK-5).** The dependency closure of the target, computed over
the whole history to a fixpoint and never narrowed by role name or body text:

- every revision of an affected atom (the target is the first affected atom);
- atoms with a revision that cites an affected atom as a source (``atom:<id>``,
  any version);
- Inputs (the records behind InputTokens) whose basis, watches or presentations
  name a revision of an affected atom, that cite it as a source, or that inherit
  an affected Input (transitively);
- atoms with a revision generated or decided from an affected Input;
- legacy data: token-less agent revisions whose batch used an affected Input
  (TOK-6, conservative), and imported links flagged ``legacy: true``;
- atoms derived (atomisation lineage, ``DERIVES_FROM``) from an affected revision.

Ordinary links are not an erasure dependency (SPEC §6 table): an atom that only
links to a purged atom survives, and its link takes the safe form
``{role, unavailable: true, required, at, orderKey}`` (LNK-2).

**Steps (LNK-6).** Each step is one transaction that also advances the stop
marker's ``step``, so a crash resumes at the right place:

1. ``plan`` — create the ``PurgeMarker {subject, atomId, startedAt, step, plan}``
   with the closure (ids only). From now on public read/write/observe of the
   subject answer PURGE_PENDING; ``purge`` of the same atom resumes, of another
   atom answers PURGE_PENDING.
2. ``relink`` — links of surviving revisions to purged atoms/revisions are
   re-pointed to the subject's one ``:Unavailable`` node (LNK-2).
3. ``erase`` — recompute the closure from the plan (a write that committed while
   the marker was being set is caught here), relink again, then DETACH DELETE
   the purged revisions and atoms, the affected Inputs (their tokens now fail as
   purged, TOK-3), Sources of ``atom:<purged id>`` and sources only purged records
   cited, usage states of purged atoms, manifests that presented a purged
   revision, and every frozen evaluation of the subject; every MCP session window
   of the subject forgets the purged atoms and the deleted manifests (MCP-1).
4. ``tombstone`` — idempotency records whose result names a purged atom keep only
   ``{scopeKey, subject, state: 'purged'}``: no fingerprint, result or operation id
   (a fingerprint would let someone confirm guessed text). A replay is refused
   with DEPENDENCY_INVALID and resurrects nothing (IDEM-5).
5. ``epoch`` — ``SubjectState.purgeEpoch`` is bumped so every cursor expires.
6. The marker is deleted, and the purge is counted as awaiting disk erasure
   (``GraphsvcMeta {key: 'erasure'}``): its bytes can stay in store files,
   transaction logs and index segments until ``graphsvc compact`` (ops/compact.py,
   docs/erasure.md); ``graphsvc erasure status`` reports them.

**What stays.** Operations keep ids, actor and counts (their edges to erased
records go). Signed events keep ids only and stay, so the per-subject hash chain
still verifies; a surviving atomised parent keeps its ``atomisedInto`` count.
The ``:Unavailable`` node holds only the subject.

**Known limit.** The write path checks the marker without a lock, so a write
whose transaction began before the marker committed may still commit after it;
step ``erase`` re-runs the closure to catch such writes before deleting anything.

**Fault injection (tests only).** ``after_step`` (or a hook a test process
installs with :func:`install_step_hook`) is called with each step's name right
after that step commits; the crash test's subprocess entry point
(tests/integration/purge_crash_entry.py) installs one that kills its process
there. Production code installs none and reads nothing from the environment.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

from graphsvc.core.binding import Binding
from graphsvc.core.input_bounds import excerpt
from graphsvc.errors import (
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    PurgePendingError,
)
from graphsvc.store import changes, meta
from graphsvc.store import purge as store
from graphsvc.store.connection import Database, Tx
from graphsvc.store.purge import PurgePlan

__all__ = [
    "PURGE_ACTOR_KINDS",
    "STEPS",
    "PurgeOutcome",
    "PurgePlan",
    "StepHook",
    "authorize",
    "install_step_hook",
    "purge",
]

# The steps in order; the marker's ``step`` names the last one that committed.
STEPS = ("plan", "relink", "erase", "tombstone", "epoch")
PURGE_ACTOR_KINDS = ("human", "input-adapter")

# Called with a step's name right after the step committed (fault injection in tests).
StepHook = Callable[[str], None]
_installed_hook: StepHook | None = None


@dataclass(frozen=True)
class PurgeOutcome:
    """What a purge erased: ids and counts only, never text."""

    atom_id: str
    # The atoms erased (the target and its dependency closure), sorted.
    purged: list[str]
    revisions: int
    inputs: int
    # An unfinished purge of the atom was resumed.
    resumed: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "atomId": self.atom_id,
            "purged": self.purged,
            "revisions": self.revisions,
            "inputs": self.inputs,
            "resumed": self.resumed,
        }


def install_step_hook(hook: StepHook | None) -> None:
    """Test-only: every purge of this process calls ``hook(step)`` after each step
    commits (None removes it). Only a test's subprocess entry point installs one."""
    global _installed_hook
    _installed_hook = hook


def authorize(binding: Binding) -> None:
    """Only humans or input adapters holding the purge right may purge.

    Raises:
        PermissionDeniedError: an agent, or a binding without ``purge: true``.
    """
    if binding.actor_kind not in PURGE_ACTOR_KINDS:
        raise PermissionDeniedError("agents may never purge")
    if not binding.may_purge:
        raise PermissionDeniedError('this binding may not purge (auth entry "purge": true)')


def purge(
    db: Database,
    clock: Callable[[], float],
    binding: Binding,
    atom_id: str,
    *,
    after_step: StepHook | None = None,
) -> PurgeOutcome:
    """Erase ``atom_id`` and its dependency closure, or resume an unfinished purge of it.

    Args:
        db: the database.
        clock: epoch seconds (the marker's and the ledger's times).
        binding: the caller; its subject is purged in, nothing else.
        atom_id: the target atom.
        after_step: called with each step's name right after it commits (tests'
            fault injection); default: the hook installed by
            :func:`install_step_hook`, if any.

    Returns:
        The atoms erased and the counts (:meth:`PurgeOutcome.to_json`: ``{atomId,
        purged, revisions, inputs, resumed}``).

    Raises:
        PermissionDeniedError: the binding may not purge.
        InvalidInputError: ``atom_id`` is empty or too long.
        NotFoundError: no such atom in the subject and no marker for it.
        PurgePendingError: a purge of another atom in the subject is unfinished.
        StoreError: Neo4j failed; the purge resumes on the next call.
    """
    authorize(binding)
    if not 1 <= len(atom_id) <= 256:
        raise InvalidInputError("atomId must be 1..256 characters")
    hook = after_step if after_step is not None else _installed_hook
    committed = hook if hook is not None else (lambda _step: None)
    subject = binding.subject
    now = datetime.fromtimestamp(clock(), UTC).isoformat()

    resumed, plan = db.write_tx(lambda tx: _begin(tx, subject, atom_id, now), label="purge plan")
    if not resumed:
        committed("plan")
    for step in STEPS[1:]:
        executed, current = db.write_tx(
            partial(
                _step,
                subject=subject,
                atom_id=atom_id,
                now=now,
                step=step,
                actor=(binding.actor_kind, binding.actor_id),
            ),
            label=f"purge {step}",
        )
        if current is None:
            break  # another caller finished this purge meanwhile
        plan = current
        if executed:
            committed(step)
    db.write_tx(lambda tx: _finish(tx, subject, atom_id, now))
    return PurgeOutcome(
        atom_id=atom_id,
        purged=sorted(plan.atom_ids),
        revisions=plan.revisions,
        inputs=len(plan.token_ids),
        resumed=resumed,
    )


def _finish(tx: Tx, subject: str, atom_id: str, now: str) -> None:
    """Delete the marker; count the purge as awaiting ``graphsvc compact`` (disk erasure)."""
    if store.delete_marker(tx, subject, atom_id):
        meta.record_purge(tx, now)


def _begin(tx: Tx, subject: str, atom_id: str, now: str) -> tuple[bool, PurgePlan]:
    """Step ``plan``: find or create the marker; compute and store the closure."""
    markers = store.lock_subject(tx, subject, now)
    if atom_id in markers:
        marker = store.lock_marker(tx, subject, atom_id, now)
        if marker is None:
            # Another caller finished this purge (and deleted the marker) while this
            # one waited for the marker's lock.
            raise NotFoundError(f"atom {excerpt(atom_id)!r} does not exist (purged meanwhile)")
        return True, marker.plan
    if markers:
        raise PurgePendingError(
            "a purge of another atom in this subject has not finished; resume it first"
        )
    if not store.atom_exists(tx, subject, atom_id):
        raise NotFoundError(f"atom {excerpt(atom_id)!r} does not exist")
    plan = _closure(tx, subject, {atom_id}, set())
    store.create_marker(tx, subject, atom_id, now, "plan", plan)
    return False, plan


def _step(
    tx: Tx,
    subject: str,
    atom_id: str,
    now: str,
    step: str,
    actor: tuple[str, str] | None = None,
) -> tuple[bool, PurgePlan | None]:
    """Run ``step`` once: skipped when the marker says it already committed.

    The erase step records the purge in the change feed (a count, no ids) and takes
    the purged atoms out of earlier change records, in its own transaction.
    """
    marker = store.lock_marker(tx, subject, atom_id, now)
    if marker is None:  # deleted while we waited for its lock
        return False, None
    plan = marker.plan
    if STEPS.index(marker.step) >= STEPS.index(step):
        return False, plan
    atoms = list(plan.atom_ids)
    if step == "relink":
        store.relink(tx, subject, atoms)
    elif step == "erase":
        plan = _closure(tx, subject, set(plan.atom_ids), set(plan.token_ids))
        # The change sequence's lock first, then the entity lock (in erase): the
        # order every writer of the subject takes them in (entities.write_mentions).
        changes.record_purge(
            tx,
            subject,
            operation_id=uuid.uuid4().hex,
            actor_kind=actor[0] if actor else None,
            actor_id=actor[1] if actor else None,
            now=now,
            atom_ids=sorted(plan.atom_ids),
        )
        store.erase(tx, subject, plan)
    elif step == "tombstone":
        store.tombstone_keys(tx, subject, atoms)
    elif step == "epoch":
        store.bump_epoch(tx, subject)
    store.advance_marker(tx, subject, atom_id, step, plan)
    return True, plan


def _closure(tx: Tx, subject: str, atoms: set[str], tokens: set[str]) -> PurgePlan:
    """The dependency closure of ``atoms``/``tokens`` (LNK-5), to a fixpoint."""
    atoms, tokens = set(atoms), set(tokens)
    new_atoms, new_tokens = set(atoms), set(tokens)
    while new_atoms or new_tokens:
        found_atoms, found_tokens = store.closure_step(
            tx, subject, sorted(new_atoms), sorted(new_tokens)
        )
        new_atoms = found_atoms - atoms
        new_tokens = found_tokens - tokens
        atoms |= new_atoms
        tokens |= new_tokens
    ids = sorted(atoms)
    return PurgePlan(tuple(ids), tuple(sorted(tokens)), store.count_revisions(tx, subject, ids))
