"""The process's mirror of each searched subject's current heads, kept at its generation.

A search of a subject of at most ``GRAPHSVC_HEAD_MIRROR_MAX`` heads answers both
candidate legs from a :class:`graphsvc.core.head_mirror.HeadMirror` instead of a
fulltext query and a vector scan. The mirror is kept per subject at the generation it
was read at: the subject's change sequence (moved by every write, revision, retirement,
archive and atomisation in the writer's transaction), its purge epoch, the embedding
generation (moved where an embedding is set on an existing head), the entity
generation (moved by each batch of ``graphsvc index rebuild --entities``) and the
schema version, all read in one round trip (``search/mirror_state``) at the start of every
search, so a write here, in another serving process or on a replica is seen by the
next search anywhere. Moving forward:

- only the change sequence moved (by at most :data:`_FOLLOW_MAX`): the heads of the
  atoms the change feed names since then are read again (``search/mirror_changes``);
- anything else moved (a purge, an embedding set, an entity rebuild batch, a schema
  change, a sequence that went backwards as after ``graphsvc compact`` into a fresh
  store): every head is read again (``search/mirror_heads``).

What it holds is derived from stored text, like the BM25 analysis cache: process
memory only, never stored or queryable; a purge moves the epoch, so the next search
drops the purged text. Memory is bounded by the heads held over all subjects
(least recently searched subjects go first).

**The callers' usage states** (:class:`UsageShelf`), kept at the subject's usage
generation. A search answered from the mirror needs the caller's usage state (AV-3) of
every node of its retrieval graph. Few atoms have one, and they change only when a use
is recorded or reset (``usage/write_states``, ``usage/reset``), which move the
subject's usage generation (``SubjectState.usageGeneration``) in the same transaction;
a purge moves the purge epoch. ``search/mirror_state``, read at the start of every
mirror search, returns both, so the states of a subject, policy and model are read
once (``search/usage_states_all``) and kept until one of them moves: a use recorded
here, in another serving process or on a replica is seen by the next search anywhere.
States are read after the generation that labels them, so a copy can only be newer
than its label (a use committed in between), never older: the next search sees the
moved generation and reads again. A subject with more states than
:data:`KEPT_STATES_MAX` for one policy is not kept; its searches read the states of
their nodes as before (``search/usage_states``). A search whose state is older than
the copy (read before another search read newer states) uses the newer copy.

**The fulltext index's analyzer** (:func:`kept_analyzer`), which the mirror must score
like, as this process last read it, kept with the index generation it was read at: the
index changes only by ``graphsvc index rebuild --fulltext``, which moves the
generation (``search/fulltext_candidates`` returns it). The indexes' path checks it
too before it scores with the subject's own statistics.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from graphsvc.core.head_mirror import HeadMirror
from graphsvc.store.connection import Database, Tx
from graphsvc.store.head_mirror import mirror_changes, mirror_heads
from graphsvc.store.retrieval import usage_states, usage_states_all

__all__ = [
    "KEPT_STATES_MAX",
    "MirrorGeneration",
    "MirrorShelf",
    "UsageShelf",
    "forget_mirrors",
    "forget_usage",
    "generation_of_state",
    "keep_analyzer",
    "kept_analyzer",
    "mirror_shelf",
    "usage_shelf",
]


# More changes than this since the mirror's sequence: read every head again (one
# query over the subject) rather than the feed's records one by one.
_FOLLOW_MAX = 512
_MIRROR_FACT = "headMirrors"


@dataclass(frozen=True)
class MirrorGeneration:
    """What a mirror is current for (the columns of ``search/mirror_state``)."""

    change_seq: int
    purge_epoch: int
    embedding_generation: int
    schema_version: Any
    entity_generation: int = 0

    def follows(self, earlier: MirrorGeneration) -> bool:
        """Whether the change feed alone moves a mirror from ``earlier`` to here."""
        return (
            self.purge_epoch == earlier.purge_epoch
            and self.embedding_generation == earlier.embedding_generation
            and self.schema_version == earlier.schema_version
            and self.entity_generation == earlier.entity_generation
            and earlier.change_seq < self.change_seq <= earlier.change_seq + _FOLLOW_MAX
        )

    def covers(self, asked: MirrorGeneration) -> bool:
        """Whether a mirror kept here already holds ``asked`` or a later change of the
        same feed: a search whose state was read before another search moved the
        mirror on uses it as it is (reads are read-committed; a mirror only moves
        forward) instead of reading every head again."""
        return (
            self.purge_epoch == asked.purge_epoch
            and self.embedding_generation == asked.embedding_generation
            and self.schema_version == asked.schema_version
            and self.entity_generation == asked.entity_generation
            and self.change_seq >= asked.change_seq
        )


def generation_of_state(state: dict[str, Any]) -> MirrorGeneration:
    """The generation in a ``search/mirror_state`` row."""
    return MirrorGeneration(
        int(state.get("changeSeq") or 0),
        int(state.get("purgeEpoch") or 0),
        int(state.get("embeddingGeneration") or 0),
        state.get("schemaVersion"),
        int(state.get("entityGeneration") or 0),
    )


@dataclass
class _Entry:
    generation: MirrorGeneration | None = None
    mirror: HeadMirror | None = None  # None at a generation: more heads than the bound
    lock: threading.Lock = field(default_factory=threading.Lock)


class MirrorShelf:
    """The mirrors of one process (one per :class:`Database`), least recently used
    first, bounded by the heads they hold together."""

    def __init__(self, max_heads: int) -> None:
        self.max_heads = max_heads
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def _entry(self, subject: str) -> _Entry:
        with self._lock:
            entry = self._entries.get(subject)
            if entry is None:
                entry = self._entries[subject] = _Entry()
            self._entries.move_to_end(subject)
            return entry

    def _evict(self) -> None:
        """Drop the least recently searched subjects' mirrors beyond the bound."""
        with self._lock:
            held = sum(len(e.mirror) for e in self._entries.values() if e.mirror is not None)
            for subject in list(self._entries)[:-1]:
                if held <= self.max_heads:
                    break
                mirror = self._entries.pop(subject).mirror
                held -= len(mirror) if mirror is not None else 0

    @contextmanager
    def current(
        self, tx: Tx, subject: str, state: dict[str, Any], bound: int
    ) -> Iterator[HeadMirror | None]:
        """The subject's mirror at ``state``'s generation, read or moved forward in
        ``tx`` as needed and held (no other search of the subject moves it) until the
        block ends; None when the subject holds more than ``bound`` heads."""
        now = generation_of_state(state)
        entry = self._entry(subject)
        with entry.lock:
            grown = entry.generation is None or not entry.generation.covers(now)
            if grown:
                if entry.mirror is not None and entry.generation and now.follows(entry.generation):
                    entry.mirror.apply(mirror_changes(tx, subject, entry.generation.change_seq))
                else:
                    entry.mirror = mirror_heads(tx, subject, bound)
                entry.generation = now
            mirror = entry.mirror
            if mirror is not None and len(mirror) > bound:
                mirror = None  # read under a larger bound (another caller's settings)
            if grown:
                self._evict()
            yield mirror

    def held(self) -> dict[str, int]:
        """Heads held per subject (diagnostics and tests)."""
        with self._lock:
            return {s: len(e.mirror) for s, e in self._entries.items() if e.mirror is not None}


def mirror_shelf(db: Database, max_heads: int) -> MirrorShelf:
    """The process's shelf of mirrors for ``db`` (made on first use), holding at most
    ``max_heads`` heads over all subjects."""
    shelf: MirrorShelf | None = db.facts.get(_MIRROR_FACT)
    if shelf is None:
        shelf = db.facts.setdefault(_MIRROR_FACT, MirrorShelf(max_heads))
    shelf.max_heads = max_heads
    return shelf


def forget_mirrors(db: Database) -> None:
    """Drop this process's mirrors: after an edit that bypasses graphsvc's writes (an
    operator's Cypher, a test simulating a crash's leftovers) moves no generation;
    the usage states kept beside them (graphsvc.process_state.head_mirrors) go too."""
    db.facts.pop(_MIRROR_FACT, None)
    forget_usage(db)


# Above this many states for one subject, policy and model, read per search instead.
KEPT_STATES_MAX = 20_000
# Kept (subject, policy, model) copies; least recently used go first.
_KEPT_COPIES = 256
_USAGE_FACT = "usageStates"

_Key = tuple[str, str, str]
_Generation = tuple[int, int, Any]
_States = dict[tuple[str, int], str]


class UsageShelf:
    """Usage states per subject, policy and model, each at the generation read."""

    def __init__(self) -> None:
        self._copies: OrderedDict[_Key, tuple[_Generation, _States | None]] = OrderedDict()
        self._lock = threading.Lock()

    def states(
        self,
        tx: Tx,
        state: dict[str, Any],
        key: _Key,
        atom_ids: Iterable[str],
    ) -> _States:
        """The caller's states of ``atom_ids`` ((atomId, rev) -> state) at ``state``'s
        generation (a ``search/mirror_state`` row), read in ``tx`` when not kept."""
        wanted = list(atom_ids)
        generation: _Generation = (
            int(state.get("usageGeneration") or 0),
            int(state.get("purgeEpoch") or 0),
            state.get("schemaVersion"),
        )
        with self._lock:
            kept = self._copies.get(key)
            if kept is not None:
                self._copies.move_to_end(key)
        if kept is None or not _covers(kept[0], generation):
            kept = (generation, usage_states_all(tx, *key, max_states=KEPT_STATES_MAX))
            with self._lock:
                self._copies[key] = kept
                self._copies.move_to_end(key)
                while len(self._copies) > _KEPT_COPIES:
                    self._copies.popitem(last=False)
        copy = kept[1]
        if copy is None:  # too many to keep
            subject, policy, model_id = key
            return usage_states(tx, subject, policy, model_id, wanted) if wanted else {}
        ids = set(wanted)
        return {ref: s for ref, s in copy.items() if ref[0] in ids}

    def kept(self) -> int:
        """How many copies are kept (tests and diagnostics)."""
        with self._lock:
            return len(self._copies)


def _covers(kept: _Generation, asked: _Generation) -> bool:
    """Whether states kept at ``kept`` hold ``asked``'s or later ones (a search whose
    state was read before another search read newer states uses those)."""
    return kept[1:] == asked[1:] and kept[0] >= asked[0]


def usage_shelf(db: Database) -> UsageShelf:
    """The process's usage shelf for ``db`` (made on first use)."""
    shelf: UsageShelf | None = db.facts.get(_USAGE_FACT)
    if shelf is None:
        shelf = db.facts.setdefault(_USAGE_FACT, UsageShelf())
    return shelf


def forget_usage(db: Database) -> None:
    """Drop this process's kept states (``forget_mirrors`` drops them with the
    mirrors)."""
    db.facts.pop(_USAGE_FACT, None)


_ANALYZER_FACT = "fulltextAnalyzer"


def kept_analyzer(db: Database) -> tuple[int, str | None] | None:
    """(index generation, analyzer) as this process last read them, if it did."""
    kept: tuple[int, str | None] | None = db.facts.get(_ANALYZER_FACT)
    return kept


def keep_analyzer(db: Database, generation: int, analyzer: str | None) -> None:
    """Keep the analyzer read at index ``generation`` for later evaluations."""
    db.facts[_ANALYZER_FACT] = (generation, analyzer)
