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
   revision, and every frozen evaluation of the subject.
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

**Fault injection (tests only).** When the environment variable
``GRAPHSVC_PURGE_KILL_AT_STEP`` names a step, the process kills itself with
SIGKILL right after that step commits. It is read here, at the fault point, on
purpose: it is a test hook, not configuration.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from neo4j import ManagedTransaction

from graphsvc.core.binding import Binding
from graphsvc.errors import (
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    PurgePendingError,
)
from graphsvc.store.queries import query

if TYPE_CHECKING:
    from graphsvc.service import Service

__all__ = ["KILL_AT_STEP_ENV", "PURGE_ACTOR_KINDS", "STEPS", "PurgePlan", "authorize", "purge"]

# The steps in order; the marker's ``step`` names the last one that committed.
STEPS = ("plan", "relink", "erase", "tombstone", "epoch")
PURGE_ACTOR_KINDS = ("human", "input-adapter")
KILL_AT_STEP_ENV = "GRAPHSVC_PURGE_KILL_AT_STEP"

Run = Callable[..., list[dict[str, Any]]]


@dataclass(frozen=True)
class PurgePlan:
    """The closure stored in the marker before anything is erased (ids only)."""

    atom_ids: tuple[str, ...]
    token_ids: tuple[str, ...]
    revisions: int

    def to_json(self) -> str:
        return json.dumps(
            {
                "atomIds": list(self.atom_ids),
                "tokenIds": list(self.token_ids),
                "revisions": self.revisions,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, raw: str) -> PurgePlan:
        doc = json.loads(raw)
        return cls(tuple(doc["atomIds"]), tuple(doc["tokenIds"]), int(doc["revisions"]))


def authorize(binding: Binding) -> None:
    """Only humans or input adapters holding the purge right may purge.

    Raises:
        PermissionDeniedError: an agent, or a binding without ``purge: true``.
    """
    if binding.actor_kind not in PURGE_ACTOR_KINDS:
        raise PermissionDeniedError("agents may never purge")
    if not binding.may_purge:
        raise PermissionDeniedError('this binding may not purge (auth entry "purge": true)')


def purge(service: Service, binding: Binding, atom_id: str) -> dict[str, Any]:
    """Erase ``atom_id`` and its dependency closure, or resume an unfinished purge of it.

    Returns:
        ``{atomId, purged: [atomIds, sorted], revisions, inputs, resumed}`` — ids
        and counts only, never text.

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
    db = service.db
    subject = binding.subject
    now = datetime.fromtimestamp(service.clock(), UTC).isoformat()

    resumed, plan = db.write_tx(lambda tx: _begin(tx, subject, atom_id, now), label="purge plan")
    if not resumed:
        _fault_point("plan")
    for step in STEPS[1:]:
        executed, current = db.write_tx(
            partial(_step, subject=subject, atom_id=atom_id, now=now, step=step),
            label=f"purge {step}",
        )
        if current is None:
            break  # another caller finished this purge meanwhile
        plan = current
        if executed:
            _fault_point(step)
    db.write_tx(lambda tx: _finish(tx, subject, atom_id, now))
    return {
        "atomId": atom_id,
        "purged": sorted(plan.atom_ids),
        "revisions": plan.revisions,
        "inputs": len(plan.token_ids),
        "resumed": resumed,
    }


def _runner(tx: ManagedTransaction) -> Run:
    def run(name: str, **params: Any) -> list[dict[str, Any]]:
        return [r.data() for r in tx.run(query(name), params)]

    return run


def _finish(tx: ManagedTransaction, subject: str, atom_id: str, now: str) -> None:
    """Delete the marker; count the purge as awaiting ``graphsvc compact`` (disk erasure)."""
    run = _runner(tx)
    if run("purge/delete_marker", subject=subject, atomId=atom_id)[0]["deleted"]:
        run("erasure/record_purge", now=now)


def _begin(tx: ManagedTransaction, subject: str, atom_id: str, now: str) -> tuple[bool, PurgePlan]:
    """Step ``plan``: find or create the marker; compute and store the closure."""
    run = _runner(tx)
    markers = run("purge/lock_subject", subject=subject, now=now)[0]["markers"]
    own = [m for m in markers if m["atomId"] == atom_id]
    if own:
        row = run("purge/lock_marker", subject=subject, atomId=atom_id, now=now)[0]
        if not row["found"] or row["plan"] is None:
            # Another caller finished this purge (and deleted the marker) while this
            # one waited for the marker's lock.
            raise NotFoundError(f"atom {atom_id!r} does not exist (purged meanwhile)")
        return True, PurgePlan.from_json(row["plan"])
    if markers:
        raise PurgePendingError(
            "a purge of another atom in this subject has not finished; resume it first"
        )
    if not run("purge/atom_exists", subject=subject, atomId=atom_id)[0]["found"]:
        raise NotFoundError(f"atom {atom_id!r} does not exist")
    plan = _plan(run, subject, {atom_id}, set())
    run(
        "purge/create_marker",
        subject=subject,
        atomId=atom_id,
        now=now,
        step="plan",
        plan=plan.to_json(),
    )
    return False, plan


def _step(
    tx: ManagedTransaction, *, subject: str, atom_id: str, now: str, step: str
) -> tuple[bool, PurgePlan | None]:
    """Run ``step`` once: skipped when the marker says it already committed."""
    run = _runner(tx)
    row = run("purge/lock_marker", subject=subject, atomId=atom_id, now=now)[0]
    if not row["found"] or row["plan"] is None:  # deleted while we waited for its lock
        return False, None
    stored = PurgePlan.from_json(row["plan"])
    if STEPS.index(row["step"]) >= STEPS.index(step):
        return False, stored
    plan = stored
    atoms = list(plan.atom_ids)
    if step == "relink":
        run("purge/relink", subject=subject, atomIds=atoms)
    elif step == "erase":
        plan = _plan(run, subject, set(plan.atom_ids), set(plan.token_ids))
        _erase(run, subject, plan)
    elif step == "tombstone":
        run("purge/tombstone_keys", subject=subject, atomIds=atoms)
    elif step == "epoch":
        run("purge/bump_epoch", subject=subject)
    run(
        "purge/advance_marker",
        subject=subject,
        atomId=atom_id,
        step=step,
        plan=plan.to_json(),
    )
    return True, plan


def _erase(run: Run, subject: str, plan: PurgePlan) -> None:
    """Delete everything the plan names (one transaction, so all or nothing)."""
    atoms = list(plan.atom_ids)
    tokens = list(plan.token_ids)
    # Late links (a write that raced the marker) get the safe form too.
    run("purge/relink", subject=subject, atomIds=atoms)
    # Manifests and sources are found through edges to the records deleted below.
    run("purge/delete_manifests", subject=subject, atomIds=atoms)
    run("purge/delete_usage", subject=subject, atomIds=atoms)
    run("purge/delete_sources", subject=subject, atomIds=atoms, tokenIds=tokens)
    run("purge/delete_inputs", subject=subject, tokenIds=tokens)
    run("purge/delete_atoms", subject=subject, atomIds=atoms)
    run("purge/delete_evaluations", subject=subject)


def _plan(run: Run, subject: str, atoms: set[str], tokens: set[str]) -> PurgePlan:
    """The dependency closure of ``atoms``/``tokens`` (LNK-5), to a fixpoint."""
    atoms, tokens = set(atoms), set(tokens)
    new_atoms, new_tokens = set(atoms), set(tokens)
    while new_atoms or new_tokens:
        row = run(
            "purge/closure_step",
            subject=subject,
            atomIds=sorted(new_atoms),
            tokenIds=sorted(new_tokens),
        )[0]
        new_atoms = set(row["atoms"]) - atoms
        new_tokens = set(row["inputs"]) - tokens
        atoms |= new_atoms
        tokens |= new_tokens
    ids = sorted(atoms)
    revisions = run("purge/count_revisions", subject=subject, atomIds=ids)[0]["revisions"]
    return PurgePlan(tuple(ids), tuple(sorted(tokens)), int(revisions))


def _fault_point(step: str) -> None:
    """Test-only fault injection: die by SIGKILL right after ``step`` committed."""
    if os.environ.get(KILL_AT_STEP_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)
