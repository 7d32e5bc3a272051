"""The process's copy of each caller's usage states, kept at the subject's usage generation.

A search answered from the head mirror (:mod:`graphsvc.process_state.head_mirrors`) needs the
caller's usage state (AV-3) of every node of its retrieval graph. Few atoms have one,
and they change only when a use is recorded or reset (``usage/write_states``,
``usage/reset``), which move the subject's usage generation
(``SubjectState.usageGeneration``) in the same transaction; a purge moves the purge
epoch. ``search/mirror_state``, read at the start of every mirror search, returns
both, so the states of a subject, policy and model are read once
(``search/usage_states_all``) and kept until one of them moves: a use recorded here,
in another serving process or on a replica is seen by the next search anywhere.

States are read after the generation that labels them, so a copy can only be newer
than its label (a use committed in between), never older: the next search sees the
moved generation and reads again. A subject with more states than
:data:`KEPT_STATES_MAX` for one policy is not kept; its searches read the states of
their nodes as before (``search/usage_states``). A search whose state is older than
the copy (read before another search read newer states) uses the newer copy.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from graphsvc.store.connection import Database, Tx
from graphsvc.store.expansion import usage_states, usage_states_all

__all__ = ["KEPT_STATES_MAX", "UsageShelf", "forget_usage", "usage_shelf"]

# Above this many states for one subject, policy and model, read per search instead.
KEPT_STATES_MAX = 20_000
# Kept (subject, policy, model) copies; least recently used go first.
_KEPT_COPIES = 256
_FACT = "usageStates"

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
    shelf: UsageShelf | None = db.facts.get(_FACT)
    if shelf is None:
        shelf = db.facts.setdefault(_FACT, UsageShelf())
    return shelf


def forget_usage(db: Database) -> None:
    """Drop this process's kept states (``forget_mirrors`` drops them with the
    mirrors)."""
    db.facts.pop(_FACT, None)
