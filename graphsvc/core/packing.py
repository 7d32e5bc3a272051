"""Budgeted, dependency-complete packing of read roots (RD-2, RD-4, RD-6…RD-8).

:func:`pack` chooses which ranked roots a read presents. Its cost is exact: the cost
of a selection is ``count_tokens(render(selection))`` on the final formatVersion 2 text
(:mod:`graphsvc.core.render`), in which shared required bodies and shared evidence
appear once. Every root is presented with its whole required closure or not at all.

Phases (RD-6):

1. **Baseline — the rank-order closure packer.** Walk the roots by score. A blocked
   root (RD-2) is recorded and skipped. A root whose closure is already presented is
   added for free. Otherwise the root is added if ``render(current ∪ closure)`` still
   fits the budget, and left out whole if it does not.
2. **Improvement.** While work remains, add the feasible left-out root with the best
   marginal gain / marginal cost (gain = score, cost = token delta of the render).

How the cost is decided without re-tokenising everything for every root: each memory
view and evidence block is counted once on its own (cached), and the cost of a
candidate selection is *estimated* as the exact count of the last verified selection
(the *anchor*) plus the counts of the pieces added, minus those removed. For a
tokenizer like tiktoken, joining JSON pieces changes the count by at most about one
token per piece, so the estimate carries an uncertainty of ``_UNC_BASE +
_UNC_PER_PIECE`` × (pieces changed since the anchor). A root is

- added tentatively when ``estimate + uncertainty <= budget``;
- otherwise decided by an exact count of the full render (which also verifies every
  tentative addition before it and becomes the new anchor). A root is never left out
  on the estimate alone: overlapping evidence ranges merge, so the estimate can err in
  both directions, and the baseline must equal the exact rank-order packer.

At the end of phase 1 the held selection is always counted exactly. Should it exceed
the budget (a tokenizer far from additive), the packer returns to the last anchor and
redoes the rest of phase 1 without tentative additions. Phase 2 adds roots only after
an exact count. So RD-8 holds for *any* ``count_tokens``: the returned text is always
one whose exact count was checked against the budget. The estimate only saves work.

Work (the bounded budget of RD-6) is measured in units: one per character handed to
``count_tokens`` plus one per call, plus one per required edge examined while taking
closures. Phase 1 always keeps enough work in reserve to count its held selection
exactly. If work runs out in phase 1, the verified selection held so far is returned
with ``baseline_complete=False``. If it runs out in phase 2, the baseline stands,
``baseline_complete`` stays true and ``improvement_stopped_early`` is set. Leftover
work then buys each left-out root's minimum budget, the exact count of its closure
rendered alone.

The objective is a proxy (RD-7): ``coverage_certified`` is always ``False``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from graphsvc.core.closure import ClosureResult, required_closure
from graphsvc.core.render import (
    EMPTY_TEXT,
    EvidenceLayout,
    SourceKey,
    assemble,
    evidence_layout,
    memory_entry,
    render,
)
from graphsvc.core.selection_models import (
    BlockedEdge,
    Body,
    Candidate,
    PackedItem,
    PackResult,
    Ref,
    RequiredEdge,
)
from graphsvc.errors import GraphsvcError, InvalidInputError

# PackResult and PackedItem live with the other value types; re-exported for callers.
__all__ = ["DEFAULT_WORK_LIMIT", "PackResult", "PackedItem", "pack"]

DEFAULT_WORK_LIMIT = 2_000_000
# Uncertainty of the piece-sum estimate, in tokens. Measured with cl100k_base on random
# views: joining a piece into the JSON lists lowers the count by 0–1 tokens; 2 per piece
# plus 4 leaves room for other BPE tokenizers. Too small only costs an extra exact count
# (or, for rejections, a root the exact packer might have kept); never the budget.
_UNC_BASE = 4
_UNC_PER_PIECE = 2


class _OutOfWork(Exception):
    """Internal signal: the next step would exceed the work limit."""


class _Meter:
    """Counts tokens and charges work; refuses a step that would pass the limit."""

    def __init__(self, count_tokens: Callable[[str], int], limit: int) -> None:
        self._count_tokens = count_tokens
        self.limit = limit
        self.used = 0

    def ensure(self, units: int, reserve: int = 0) -> None:
        if self.used + units + reserve > self.limit:
            raise _OutOfWork

    def charge(self, units: int) -> None:
        self.used += units

    def count(self, text: str, reserve: int = 0) -> int:
        self.ensure(len(text) + 1, reserve)
        self.used += len(text) + 1
        n = self._count_tokens(text)
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise GraphsvcError(f"count_tokens returned {n!r}, not a non-negative int")
        return n


@dataclass(slots=True)
class _Anchor:
    """A selection whose text was counted exactly."""

    tokens: int
    raw: int
    refs: frozenset[Ref]
    blocks: frozenset[str]


@dataclass(slots=True)
class _State:
    """Phase-1/2 bookkeeping; copied whole to snapshot an anchor."""

    pos: int = 0
    order: list[Ref] = field(default_factory=list)
    roots: dict[Ref, float] = field(default_factory=dict)
    left_out: list[Ref] = field(default_factory=list)
    blocked: list[Ref] = field(default_factory=list)
    entry_sum: int = 0
    text: str = EMPTY_TEXT
    verified: bool = True

    def copy(self) -> _State:
        return _State(
            self.pos,
            list(self.order),
            dict(self.roots),
            list(self.left_out),
            list(self.blocked),
            self.entry_sum,
            self.text,
            self.verified,
        )


@dataclass(slots=True)
class _Eval:
    """A candidate selection ``current ∪ closure`` with its estimated cost."""

    new: list[Ref]
    order: list[Ref]
    layout: EvidenceLayout
    raw: int
    entry_sum: int
    estimate: int
    uncertainty: int


class _Packer:
    def __init__(
        self,
        candidates: Sequence[Candidate],
        bodies: Mapping[Ref, Body],
        required: Mapping[Ref, Sequence[RequiredEdge]],
        budget: int,
        meter: _Meter,
    ) -> None:
        self.bodies = bodies
        self.required = required
        self.budget = budget
        self.meter = meter
        # Rank order: by score, highest first; a stable sort keeps the caller's order
        # among equal scores; a repeated root counts once, at its best rank.
        ranked = sorted(enumerate(candidates), key=lambda p: (-p[1].score, p[0]))
        self.ranked: list[Candidate] = []
        seen: set[Ref] = set()
        for _, c in ranked:
            if c.ref not in seen:
                seen.add(c.ref)
                self.ranked.append(c)
        self.closures: dict[Ref, ClosureResult] = {}
        self.entry_tokens: dict[Ref, int] = {}
        self.block_tokens: dict[str, int] = {}
        self.entry_text: dict[tuple[Ref, tuple[str, ...]], str] = {}
        self.plain_text: dict[Ref, str] = {}  # entries of bodies quoting no source
        self.base_tokens = 0
        self.anchor = _Anchor(0, 0, frozenset(), frozenset())
        self.anchor_state = _State()

    # -- closures ---------------------------------------------------------------

    def closure(self, root: Ref, reserve: int) -> ClosureResult:
        cached = self.closures.get(root)
        if cached is not None:
            return cached
        result = required_closure(root, self.required)
        cost = result.edges_examined + 1
        self.meter.ensure(cost, reserve)
        self.meter.charge(cost)
        missing = tuple(m for m in result.members if m not in self.bodies)
        if missing and not result.blocked:
            # A body the store could not load (e.g. purged mid-read) is not presentable;
            # a ref name alone never counts as presented (RD-2).
            edges = tuple(BlockedEdge(m, "unavailable", None) for m in missing)
            result = ClosureResult(root, result.members, True, missing, edges, cost - 1)
        elif missing:
            extra = tuple(m for m in missing if m not in result.blocked_by)
            result = ClosureResult(
                root,
                result.members,
                True,
                result.blocked_by + extra,
                result.blocked_edges + tuple(BlockedEdge(m, "unavailable", None) for m in extra),
                result.edges_examined,
            )
        self.closures[root] = result
        return result

    # -- rendering and estimating -------------------------------------------------

    def entry(self, ref: Ref, source_ids: Mapping[SourceKey, str]) -> str:
        # Most bodies quote no source: their entry is the same whatever the evidence
        # ids, and the packer asks for it once per step for every body held.
        text = self.plain_text.get(ref)
        if text is not None:
            return text
        body = self.bodies[ref]
        ids = tuple(
            source_ids[(c.uri, c.version, c.digest, c.unit)]
            for c in body.sources
            if c.quotes and c.unit is not None
        )
        key = (ref, ids)
        text = self.entry_text.get(key)
        if text is None:
            text = memory_entry(body, source_ids)
            self.entry_text[key] = text
            if not ids:
                self.plain_text[ref] = text
        return text

    def text_of(self, ev: _Eval) -> str:
        entries = [self.entry(r, ev.layout.source_ids) for r in ev.order]
        return assemble(entries, ev.layout.blocks)

    def evaluate(self, state: _State, new: list[Ref], reserve: int) -> _Eval:
        order = state.order + new
        layout = evidence_layout([self.bodies[r] for r in order])
        fresh_entries = [
            (r, self.entry(r, layout.source_ids)) for r in new if r not in self.entry_tokens
        ]
        fresh_blocks = list(dict.fromkeys(b for b in layout.blocks if b not in self.block_tokens))
        cost = sum(len(t) + 1 for _, t in fresh_entries) + sum(len(b) + 1 for b in fresh_blocks)
        self.meter.ensure(cost, reserve)
        for r, t in fresh_entries:
            self.entry_tokens[r] = self.meter.count(t)
        for b in fresh_blocks:
            self.block_tokens[b] = self.meter.count(b)
        entry_sum = state.entry_sum + sum(self.entry_tokens[r] for r in new)
        raw = self.base_tokens + entry_sum + sum(self.block_tokens[b] for b in layout.blocks)
        changed = len(frozenset(order) ^ self.anchor.refs) + len(
            frozenset(layout.blocks) ^ self.anchor.blocks
        )
        return _Eval(
            new=new,
            order=order,
            layout=layout,
            raw=raw,
            entry_sum=entry_sum,
            estimate=self.anchor.tokens + raw - self.anchor.raw,
            uncertainty=_UNC_BASE + _UNC_PER_PIECE * changed,
        )

    # -- state transitions --------------------------------------------------------

    def reserve(self, state: _State) -> int:
        # Work held back so the unverified selection can always be counted exactly.
        return 0 if state.verified else len(state.text) + 1

    def take(self, state: _State, ev: _Eval, text: str, root: Candidate) -> None:
        state.order = ev.order
        state.entry_sum = ev.entry_sum
        state.text = text
        state.roots[root.ref] = root.score
        state.verified = False

    def set_anchor(self, state: _State, tokens: int, raw: int, blocks: Sequence[str]) -> None:
        state.verified = True
        self.anchor = _Anchor(tokens, raw, frozenset(state.order), frozenset(blocks))
        self.anchor_state = state.copy()

    def verify(self, state: _State) -> bool:
        """Count the held selection exactly; anchor it if it fits."""
        if state.verified:
            return True
        tokens = self.meter.count(state.text)
        if tokens > self.budget:
            return False
        layout = evidence_layout([self.bodies[r] for r in state.order])
        raw = self.base_tokens + state.entry_sum + sum(self.block_tokens[b] for b in layout.blocks)
        self.set_anchor(state, tokens, raw, layout.blocks)
        return True

    # -- phase 1 ------------------------------------------------------------------

    def phase1(self, state: _State, exact_only: bool) -> None:
        """Run the rank-order closure packer from ``state.pos``; may raise _OutOfWork."""
        while state.pos < len(self.ranked):
            cand = self.ranked[state.pos]
            # Advance first: an anchor taken inside the step must resume after it.
            state.pos += 1
            self.step(state, cand, exact_only)

    def step(self, state: _State, cand: Candidate, exact_only: bool) -> None:
        closure = self.closure(cand.ref, self.reserve(state))
        if closure.blocked:
            state.blocked.append(cand.ref)
            return
        present = set(state.order)
        new = [m for m in closure.members if m not in present]
        if not new:
            # Everything is already presented as someone's required body: free.
            state.roots[cand.ref] = cand.score
            return
        ev = self.evaluate(state, new, self.reserve(state))
        if not exact_only and ev.estimate + ev.uncertainty <= self.budget:
            text = self.text_of(ev)
            self.meter.ensure(len(text) + 1)  # the reserve that will verify it
            self.take(state, ev, text, cand)
            return
        # A rejection is always decided by an exact count: merged evidence blocks make
        # the piece-sum estimate unreliable downwards, and the baseline must be exactly
        # the rank-order packer's choice.
        text = self.text_of(ev)
        tokens = self.meter.count(text, self.reserve(state))
        if tokens <= self.budget:
            self.take(state, ev, text, cand)
            self.set_anchor(state, tokens, ev.raw, ev.layout.blocks)
        else:
            state.left_out.append(cand.ref)

    # -- phase 2 ------------------------------------------------------------------

    def phase2(self, state: _State, added: list[Ref]) -> None:
        """Add left-out roots by gain / cost to ``added``; may raise _OutOfWork.

        Every addition is counted exactly first, so the state is verified whenever
        this raises.
        """
        rank = {c.ref: i for i, c in enumerate(self.ranked)}
        scores = {c.ref: c.score for c in self.ranked}
        pool = list(state.left_out)
        while pool:
            best: tuple[float, int, Ref, _Eval] | None = None
            for ref in list(pool):
                present = set(state.order)
                new = [m for m in self.closures[ref].members if m not in present]
                if not new:
                    state.roots[ref] = scores[ref]
                    state.left_out.remove(ref)
                    pool.remove(ref)
                    added.append(ref)
                    continue
                ev = self.evaluate(state, new, 0)
                if ev.estimate - ev.uncertainty > self.budget:
                    # Adding more bodies never makes this one cheaper: drop it for good.
                    pool.remove(ref)
                    continue
                delta = max(ev.estimate - self.anchor.tokens, 1)
                key = (-scores[ref] / delta, rank[ref], ref, ev)
                if best is None or key[:2] < best[:2]:
                    best = key
            if best is None:
                break
            _, _, ref, ev = best
            pool.remove(ref)
            text = self.text_of(ev)
            tokens = self.meter.count(text)
            if tokens <= self.budget:
                self.take(state, ev, text, Candidate(ref, scores[ref]))
                self.set_anchor(state, tokens, ev.raw, ev.layout.blocks)
                state.left_out.remove(ref)
                added.append(ref)

    # -- minimum budgets ------------------------------------------------------------

    def min_budgets(self, refs: Sequence[Ref]) -> dict[Ref, int]:
        out: dict[Ref, int] = {}
        for ref in refs:
            text = render([self.bodies[m] for m in self.closures[ref].members])
            try:
                out[ref] = self.meter.count(text)
            except _OutOfWork:
                continue  # a later, smaller closure may still be affordable
        return out


def pack(
    candidates: Sequence[Candidate],
    bodies: Mapping[Ref, Body],
    required: Mapping[Ref, Sequence[RequiredEdge]],
    budget: int,
    count_tokens: Callable[[str], int],
    *,
    work_limit: int = DEFAULT_WORK_LIMIT,
) -> PackResult:
    """Choose and render the roots a read presents within a token budget.

    Args:
        candidates: the ranked roots (order breaks score ties).
        bodies: every presentable body the closures may need, keyed by revision.
        required: the resolved required links of each revision (see
            :func:`~graphsvc.core.closure.required_closure`).
        budget: ``memoryTokenBudget``; ``count_tokens(text) <= budget`` always holds.
        count_tokens: the tokenizer's counting function (e.g. tiktoken cl100k_base).
        work_limit: the bounded work budget, in the units of the module docstring.

    Returns:
        The rendered text, items and selection facts.

    Raises:
        InvalidInputError: ``budget`` or ``work_limit`` is negative or not an int, a
            body is filed under another revision, or the bodies are inconsistent
            (see :func:`~graphsvc.core.render.render`).
        GraphsvcError: ``count_tokens`` returned something other than a
            non-negative int.
    """
    _check_inputs(bodies, budget, work_limit)
    meter = _Meter(count_tokens, work_limit)
    packer = _Packer(candidates, bodies, required, budget, meter)
    base = _baseline(packer)
    added: list[Ref] = []
    stopped_early = False
    if base.complete and base.counted and not base.exceeds:
        try:
            packer.phase2(base.state, added)
        except _OutOfWork:
            stopped_early = True
    return _result(packer, base, added, stopped_early)


def _check_inputs(bodies: Mapping[Ref, Body], budget: int, work_limit: int) -> None:
    for name, value in (("budget", budget), ("work_limit", work_limit)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidInputError(f"{name} must be a non-negative integer")
    for ref, body in bodies.items():
        if body.ref != ref:
            raise InvalidInputError(f"body of {body.ref.key} filed under {ref.key}")


@dataclass
class _Baseline:
    """Phase 1's outcome: the baseline selection and whether it is complete."""

    state: _State
    complete: bool  # phase 1 ran to its end within the work limit
    counted: bool  # the empty text was counted
    exceeds: bool  # the empty text alone is over the budget
    refs: tuple[Ref, ...] = ()
    roots: tuple[Ref, ...] = ()


def _baseline(packer: _Packer) -> _Baseline:
    """Count the empty text, then choose the baseline selection (phase 1)."""
    base = _Baseline(_State(), complete=True, counted=False, exceeds=False)
    try:
        packer.base_tokens = packer.meter.count(EMPTY_TEXT)
        base.counted = True
    except _OutOfWork:
        base.complete = False
    else:
        packer.set_anchor(base.state, packer.base_tokens, packer.base_tokens, ())
        base.exceeds = packer.base_tokens > packer.budget

    if base.counted and base.exceeds:
        # Nothing can be presented; still tell blocked roots from left-out ones.
        for cand in packer.ranked:
            try:
                closure = packer.closure(cand.ref, 0)
            except _OutOfWork:
                base.complete = False
                break
            (base.state.blocked if closure.blocked else base.state.left_out).append(cand.ref)
    elif base.counted:
        try:
            packer.phase1(base.state, exact_only=False)
        except _OutOfWork:
            base.complete = False
        if not packer.verify(base.state):
            # A tentative addition was wrong (the tokenizer is far from additive): go
            # back to the last exact count and redo the rest without tentative additions.
            base.state = packer.anchor_state.copy()
            if base.complete:
                try:
                    packer.phase1(base.state, exact_only=True)
                except _OutOfWork:
                    base.complete = False

    base.refs = tuple(base.state.order)
    base.roots = tuple(c.ref for c in packer.ranked if c.ref in base.state.roots)
    return base


def _result(packer: _Packer, base: _Baseline, added: list[Ref], stopped_early: bool) -> PackResult:
    """The packed text and the selection facts, after phase 2."""
    state, meter, budget = base.state, packer.meter, packer.budget
    decided = set(state.roots) | set(state.blocked) | set(state.left_out)
    unvisited = tuple(c.ref for c in packer.ranked if c.ref not in decided)
    min_budget = packer.min_budgets(state.left_out)

    if not base.counted or base.exceeds:
        text, tokens = "", 0
    elif not state.verified:
        # Unreachable by construction; refusing beats returning an unchecked text.
        raise GraphsvcError("internal: the packed selection was never counted exactly")
    else:
        text, tokens = state.text, packer.anchor.tokens

    scores = {c.ref: c.score for c in packer.ranked}
    items = [
        PackedItem(r, "root", scores[r], False)
        if r in state.roots
        else PackedItem(r, "required", None, False)
        for r in state.order
    ]
    items.extend(PackedItem(r, "root", scores[r], True) for r in state.blocked)
    return PackResult(
        text=text,
        tokens=tokens,
        budget=budget,
        items=tuple(items),
        blocked_roots=tuple(state.blocked),
        baseline_complete=base.complete,
        improvement_stopped_early=stopped_early,
        work_used=meter.used,
        work_limit=meter.limit,
        baseline_refs=base.refs,
        baseline_roots=base.roots,
        min_budget_for=MappingProxyType(min_budget),
        left_out=tuple(state.left_out),
        unvisited=unvisited,
        added_by_improvement=tuple(added),
        blocked_by=MappingProxyType({r: packer.closures[r].blocked_by for r in state.blocked}),
        blocked_edges=MappingProxyType(
            {r: packer.closures[r].blocked_edges for r in state.blocked}
        ),
        empty_exceeds_budget=base.exceeds,
    )
