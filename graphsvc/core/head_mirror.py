"""One subject's current heads held in process: both candidate legs without Neo4j.

A search's two candidate legs read the same things every time until the subject
changes: every current body (the lexical leg scores them with the subject's own
BM25, :mod:`graphsvc.core.bm25`) and every stored embedding (the vector leg's exact
scan). Asking Neo4j for them costs a fulltext query and a vector scan per search,
most of a search's database CPU on a small subject (docs/performance.md). A
:class:`HeadMirror` holds them instead, with an inverted index of the analysed terms
and the embeddings as one matrix, and answers both legs as the queries would:

- :meth:`HeadMirror.lexical`: the bodies holding a query term, scored by
  :func:`graphsvc.core.bm25.score_bodies` with the subject's statistics counted
  from the mirror itself (:meth:`HeadMirror.stats`), best first (ties by atomId), in
  the rows of ``search/fulltext_candidates`` (every row with its embedding); the
  scores of every head (:meth:`HeadMirror.bm25`) also give the fusion each
  candidate's lexical signal, so its bodies are not analysed and scored again;
- :meth:`HeadMirror.semantic`: Neo4j's ``vector.similarity.cosine`` (``(1 + cos) /
  2``) of every head whose embedding has the query's length, best first, in the rows
  of ``search/vector_candidates_small``.

The store keeps one per subject and moves it forward by the change feed
(:mod:`graphsvc.process_state.head_mirrors`); this module only holds and answers. It is
derived from stored text like the BM25 analysis cache: process memory only, never
stored or queryable, dropped with the process.

Pure: no I/O, no clock.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from graphsvc.core.acquisition import EntityHop
from graphsvc.core.activation import neo4j_cosines
from graphsvc.core.bm25 import (
    BM25_B,
    BM25_K1,
    QueryTerms,
    SubjectStats,
    bm25_idf,
    body_length,
    indexed,
)
from graphsvc.core.entity_resolution import EntityForms, probe_words, variant
from graphsvc.core.write_models import AtomLinkView, AtomRef, AtomView, LinkAt

__all__ = ["HeadMirror", "HeadView", "MirrorBM25", "MirrorHead", "packed_embedding"]

_Matrix = np.ndarray[Any, np.dtype[np.float64]]
# A term's postings as arrays (HeadMirror._posting): slots, term frequencies, and
# every occurrence as ``slot << 32 | position``, ascending.
_Posting = tuple[np.ndarray[Any, np.dtype[np.int64]], _Matrix, np.ndarray[Any, np.dtype[np.int64]]]


def packed_embedding(vector: Sequence[float]) -> bytes:
    """An embedding as raw float64 bytes (:attr:`MirrorHead.embedding`)."""
    return np.asarray(vector, dtype=np.float64).tobytes()


@dataclass(frozen=True)
class HeadView:
    """What a head's public view (``view/atom_views``) holds beyond the mirror's own
    columns: its state, its sources (the stored JSON), the atom it was atomised from,
    and its links in order as (role, at, required, orderKey, unavailable, target
    atomId, the target's revision: None for a logical link, resolved to the target's
    head when the view is made)."""

    state: str
    sources: str | None
    atom_of: str | None
    links: tuple[tuple[str, str, bool, str | None, bool, str | None, int | None], ...]

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> HeadView | None:
        if row.get("state") is None:
            return None
        return cls(
            state=str(row["state"]),
            sources=row.get("sources"),
            atom_of=row.get("atomOf"),
            links=tuple(
                (
                    str(role),
                    str(at),
                    bool(required),
                    order_key,
                    bool(unavailable),
                    target,
                    None if rev is None else int(rev),
                )
                for role, at, required, order_key, unavailable, target, rev in row.get("viewLinks")
                or ()
            ),
        )


@dataclass(frozen=True)
class MirrorBM25:
    """One query's BM25 of every head of a mirror (by slot: a body without a query
    term scores 0), the query's upper bound (``Σ idf`` over its clauses) and the
    statistics both were counted with; valid while the mirror does not change."""

    scores: _Matrix
    bound: float
    stats: SubjectStats


@dataclass(frozen=True)
class MirrorHead:
    """One current head as the mirror keeps it."""

    atom_id: str
    rev: int
    text: str
    atomised_into: int | None
    archived_at: str | None
    # The stored embedding as raw float64 (8 bytes a dimension: a tuple of Python
    # floats would take four times that), None for a head without one.
    embedding: bytes | None
    # The head's declared links: (role, target atomId, the pinned revision of an
    # observed link or None for a logical one, unavailable since a purge).
    links: tuple[tuple[str, str, int | None, bool], ...] = ()
    # The entity index (ENT-4): the keys of the entities the head mentions, and
    # whether the index has reached the head at all.
    mentions: tuple[str, ...] = ()
    entity_indexed: bool = False
    # Each mention as (entity key, the form its text gave, its type): what a query's
    # short forms resolve against (ENT-6, HeadMirror.query_entities).
    entity_forms: tuple[tuple[str, str, str], ...] = ()
    # The rest of the head's public view (None: not read with it).
    view: HeadView | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> MirrorHead:
        """A head from a row with the columns of ``search/mirror_heads``."""
        vector = row.get("embedding")
        return cls(
            atom_id=str(row["atomId"]),
            rev=int(row["rev"]),
            text=str(row.get("text") or ""),
            atomised_into=row.get("atomisedInto"),
            archived_at=row.get("archivedAt"),
            embedding=None if vector is None else packed_embedding(vector),
            links=tuple(
                (str(role), str(target), None if pinned is None else int(pinned), bool(gone))
                for role, target, pinned, gone in row.get("links") or ()
            ),
            mentions=tuple(sorted(str(k) for k in row.get("mentions") or ())),
            entity_indexed=bool(row.get("entityIndexed")),
            entity_forms=tuple(
                sorted((str(k), str(f), str(t)) for k, f, t in row.get("entityForms") or ())
            ),
            view=HeadView.from_row(row),
        )

    def vector(self) -> _Matrix:
        """The embedding as an array (empty for a head without one)."""
        return np.frombuffer(self.embedding or b"", dtype=np.float64)

    @property
    def hidden(self) -> bool:
        """Hidden unless archived heads are asked for (an atomised, archived parent)."""
        return (self.atomised_into or 0) > 0 and self.archived_at is not None


class HeadMirror:
    """A subject's current heads, their term postings and their embeddings.

    Embeddings sit in one matrix, a row per head (a removed head's row is zeroed and
    reused), so a change costs one row, not a new matrix. Not thread-safe: the
    caller serialises :meth:`apply` against the readers, with two exceptions:
    :meth:`view` and :meth:`requires_nothing` may run while another thread applies
    changes (the store shows a search's hits, and a read walks its closure, after the
    subject's lock is released). They only look heads up in
    one dict, one ``get`` at a time (atomic under the GIL), and a :class:`MirrorHead`
    never changes, so it sees each head before or after a change; a head being
    replaced is briefly missing, and the caller then reads that view from Neo4j
    (graphsvc.store.views.load_views).
    """

    def __init__(self, heads: Iterable[MirrorHead] = ()) -> None:
        self._heads: dict[str, MirrorHead] = {}
        # term → {slot: the term's positions in the body} (analysed terms, as the
        # mirror scores). Every head has a slot; its body length and whether it is
        # hidden sit in arrays by slot, so the lexical leg scores a term's postings at
        # once (numpy), not a body at a time. A removed head's slot is reused.
        self._postings: dict[str, dict[int, tuple[int, ...]]] = {}
        # A term's postings as arrays, made when a search first asks for the term and
        # dropped when a head holding it changes.
        self._arrays: dict[str, _Posting] = {}
        self._slot_of: dict[str, int] = {}
        self._slot_atom: list[str | None] = []
        self._slot_free: list[int] = []
        self._lengths: _Matrix = np.zeros(0)
        self._hidden: np.ndarray[Any, np.dtype[np.bool_]] = np.zeros(0, dtype=bool)
        self._words = 0
        self._dimension = 0
        self._matrix: _Matrix = np.zeros((0, 0))
        self._norms: _Matrix = np.zeros(0)
        # Whether the head of each row is hidden (MirrorHead.hidden), by row.
        self._row_hidden: np.ndarray[Any, np.dtype[np.bool_]] = np.zeros(0, dtype=bool)
        self._row_of: dict[str, int] = {}
        # Rows past this one were never used: the matrix grows by doubling, and a
        # search's product skips them (at 10k heads, 16,384 rows, 6,384 of them empty).
        self._rows_used = 0
        # target atomId → the atoms whose heads link to it (in the order added).
        self._incoming: dict[str, dict[str, None]] = {}
        # entity key → the atoms whose heads mention it.
        self._mentioners: dict[str, dict[str, None]] = {}
        # entity key → its mentioners' rows for the entity hop (atomId order), made
        # when a search first asks and dropped when a mentioner changes: sorting and
        # building them on every search was a large share of the hop's time.
        self._mention_rows: dict[str, tuple[tuple[Any, ...], ...]] = {}
        # entity key → {(form, type): mentions}, and query word → the entity keys it may
        # name (entity_resolution.probe_words): a query's entities without a scan.
        self._entity_forms: dict[str, dict[tuple[str, str], int]] = {}
        self._probe: dict[str, set[str]] = {}
        self._atom_at: list[str | None] = []
        self._free: list[int] = []
        for head in heads:
            self._add(head)

    def __len__(self) -> int:
        return len(self._heads)

    def __contains__(self, atom_id: object) -> bool:
        return atom_id in self._heads

    def apply(self, changed: Mapping[str, MirrorHead | None]) -> None:
        """Replace each changed atom's head (None: the atom has no current head)."""
        for atom_id, head in changed.items():
            old = self._heads.get(atom_id)
            if old == head:
                continue
            if old is not None:
                self._remove(old)
            if head is not None:
                self._add(head)

    def _add(self, head: MirrorHead) -> None:
        self._heads[head.atom_id] = head
        length = body_length(head.text)
        self._words += length
        if not self._slot_free:
            grow = max(16, len(self._slot_atom))
            size = len(self._slot_atom)
            self._slot_free = list(range(size + grow - 1, size - 1, -1))
            self._slot_atom.extend([None] * grow)
            self._lengths = np.concatenate([self._lengths, np.zeros(grow)])
            self._hidden = np.concatenate([self._hidden, np.zeros(grow, dtype=bool)])
        slot = self._slot_free.pop()
        self._slot_of[head.atom_id] = slot
        self._slot_atom[slot] = head.atom_id
        self._lengths[slot] = length
        self._hidden[slot] = head.hidden
        for term, positions in indexed(head.text)[0].items():
            self._postings.setdefault(term, {})[slot] = positions
            self._arrays.pop(term, None)
        for _, target, _, _ in head.links:
            self._incoming.setdefault(target, {})[head.atom_id] = None
        for key in head.mentions:
            self._mentioners.setdefault(key, {})[head.atom_id] = None
            self._mention_rows.pop(key, None)
        self._count_forms(head, 1)
        if head.embedding is None:
            return
        vector = head.vector()
        if not self._dimension:
            self._dimension = len(vector)
            self._matrix = np.zeros((0, self._dimension))
        if len(vector) != self._dimension:
            return  # another model's length (reembed under way): see cosines()
        if not self._free:
            grow = max(16, len(self._atom_at))
            self._free = list(range(len(self._atom_at) + grow - 1, len(self._atom_at) - 1, -1))
            self._atom_at.extend([None] * grow)
            self._matrix = np.vstack([self._matrix, np.zeros((grow, self._dimension))])
            self._norms = np.concatenate([self._norms, np.zeros(grow)])
            self._row_hidden = np.concatenate([self._row_hidden, np.zeros(grow, dtype=bool)])
        row = self._free.pop()
        self._rows_used = max(self._rows_used, row + 1)
        self._matrix[row] = vector
        self._norms[row] = float(np.linalg.norm(self._matrix[row]))
        self._row_hidden[row] = head.hidden
        self._row_of[head.atom_id] = row
        self._atom_at[row] = head.atom_id

    def _remove(self, head: MirrorHead) -> None:
        del self._heads[head.atom_id]
        self._words -= body_length(head.text)
        slot = self._slot_of.pop(head.atom_id)
        for term in indexed(head.text)[0]:
            self._arrays.pop(term, None)
            posting = self._postings.get(term)
            if posting is not None:
                posting.pop(slot, None)
                if not posting:
                    del self._postings[term]
        self._slot_atom[slot] = None
        self._lengths[slot] = 0.0
        self._hidden[slot] = False
        self._slot_free.append(slot)
        for _, target, _, _ in head.links:
            sources = self._incoming.get(target)
            if sources is not None:
                sources.pop(head.atom_id, None)
                if not sources:
                    del self._incoming[target]
        for key in head.mentions:
            self._mention_rows.pop(key, None)
            heads = self._mentioners.get(key)
            if heads is not None:
                heads.pop(head.atom_id, None)
                if not heads:
                    del self._mentioners[key]
        self._count_forms(head, -1)
        row = self._row_of.pop(head.atom_id, None)
        if row is not None:
            self._matrix[row] = 0.0
            self._norms[row] = 0.0
            self._row_hidden[row] = False
            self._atom_at[row] = None
            self._free.append(row)

    def _count_forms(self, head: MirrorHead, step: int) -> None:
        for key, form, kind in head.entity_forms:
            forms = self._entity_forms.get(key)
            if forms is None:
                forms = self._entity_forms[key] = {}
                for word in probe_words(key):
                    self._probe.setdefault(word, set()).add(key)
            count = forms.get((form, kind), 0) + step
            if count > 0:
                forms[(form, kind)] = count
                continue
            forms.pop((form, kind), None)
            if not forms:
                del self._entity_forms[key]
                for word in probe_words(key):
                    keys = self._probe[word]
                    keys.discard(key)
                    if not keys:
                        del self._probe[word]

    def query_entities(self, keys: Sequence[str]) -> list[EntityForms]:
        """``search/query_entities``'s answer from the heads held: every entity whose
        probe words (:func:`~graphsvc.core.entity_resolution.probe_words`) hold a
        variant of one of ``keys``, with its forms and types (key order)."""
        found = {e for k in keys for e in self._probe.get(variant(k), ())}
        out = []
        for key in sorted(found):
            pairs = self._entity_forms[key]
            out.append(
                EntityForms(key, frozenset(f for f, _ in pairs), frozenset(t for _, t in pairs))
            )
        return out

    def view(self, ref: AtomRef) -> AtomView | None:
        """The public view of ``ref`` as ``view/atom_views`` gives it, when ``ref`` is a
        head held here (None otherwise, or when a logical link's target is not held:
        its head revision is not known here)."""
        head = self._heads.get(ref.atom_id)
        if head is None or head.rev != ref.rev or head.view is None:
            return None
        facts = head.view
        links = []
        for role, at, required, order_key, unavailable, target, rev in facts.links:
            to: AtomRef | None = None
            if not unavailable and target is not None:
                if rev is None:
                    held = self._heads.get(target)
                    if held is None:
                        return None
                    rev = held.rev
                to = AtomRef(target, rev)
            links.append(
                AtomLinkView(
                    role=role,
                    at=cast(LinkAt, at),
                    required=required,
                    order_key=order_key,
                    target=to,
                    unavailable=unavailable,
                )
            )
        return AtomView(
            atom_id=head.atom_id,
            rev=head.rev,
            state=facts.state,
            text=head.text,
            head=True,
            links=tuple(links),
            sources=tuple(json.loads(facts.sources)) if facts.sources else (),
            atom_of=facts.atom_of,
            atomised_into=head.atomised_into,
            archived_at=head.archived_at,
        )

    def requires_nothing(self, ref: AtomRef) -> bool:
        """Whether ``ref`` is a head held here (with its view) that declares no required
        link: its required closure ends at itself. A revision's links are written with
        it and never gain a required one later (a purge re-points a link, keeping its
        ``required``), so this holds for ``ref`` whatever the mirror's generation."""
        head = self._heads.get(ref.atom_id)
        if head is None or head.rev != ref.rev or head.view is None:
            return False
        return not any(link[2] for link in head.view.links)

    def edges(self, atom_id: str) -> list[list[Any]]:
        """The retrieval graph's edges of ``atom_id``'s head, as rows of
        ``search/expand_level`` ``[src, dst, role, reached, its rev, atomisedInto,
        archivedAt]``: its own links, then those of the heads linking to it. A logical
        link binds to the target's current head, an observed one only while its pinned
        revision is current; a link made unavailable by a purge is none."""
        head = self._heads.get(atom_id)
        if head is None:
            return []
        rows: list[list[Any]] = []
        for role, target, pinned, gone in head.links:
            to = self._heads.get(target)
            if gone or to is None or (pinned is not None and pinned != to.rev):
                continue
            rows.append([atom_id, target, role, target, to.rev, to.atomised_into, to.archived_at])
        for source in self._incoming.get(atom_id, ()):
            src = self._heads[source]
            for role, target, pinned, gone in src.links:
                if target != atom_id or gone or (pinned is not None and pinned != head.rev):
                    continue
                rows.append(
                    [source, atom_id, role, source, src.rev, src.atomised_into, src.archived_at]
                )
        return rows

    def entity_hop(
        self, seeds: Sequence[str], query_keys: Sequence[str], max_degree: int
    ) -> EntityHop:
        """``search/entity_hop``'s answer from the heads held: each seed's head (seed
        order) with whether the index reached it and the keys of the entities it
        mentions that at most ``max_degree`` heads mention; each such entity, and each
        the query names, with every head that mentions it (atomId order)."""

        def traversed(key: str) -> bool:
            return 0 < len(self._mentioners.get(key, ())) <= max_degree

        rows: list[Sequence[Any]] = []
        for atom_id in seeds:
            head = self._heads.get(atom_id)
            if head is not None:
                keys = [k for k in head.mentions if traversed(k)]
                rows.append([atom_id, head.entity_indexed, keys])
        named = set(query_keys)
        entities: list[Sequence[Any]] = []
        for key in dict.fromkeys([*query_keys, *(k for row in rows for k in row[2])]):
            if traversed(key):
                entities.append([key, key in named, self._mentioner_rows(key)])
        return EntityHop(rows, entities)

    def _mentioner_rows(self, key: str) -> tuple[tuple[Any, ...], ...]:
        """``[atomId, rev, atomisedInto, archivedAt]`` of each head mentioning ``key``,
        in atomId order (kept until one of them changes; never mutated by readers)."""
        kept = self._mention_rows.get(key)
        if kept is None:
            heads = [self._heads[a] for a in sorted(self._mentioners[key])]
            kept = tuple((h.atom_id, h.rev, h.atomised_into, h.archived_at) for h in heads)
            self._mention_rows[key] = kept
        return kept

    def stats(self, query: QueryTerms) -> SubjectStats:
        """The subject's BM25 statistics for ``query``'s terms, from every head."""
        docs = len(self._heads)
        return SubjectStats(
            docs=docs,
            avg_length=self._words / docs if docs else 0.0,
            df={t: len(self._postings.get(t, ())) for t in set(query.terms)},
        )

    def bm25(self, query: QueryTerms, *, slop: int) -> MirrorBM25:
        """The subject's own BM25 of every head for ``query`` and the query's bound:
        :func:`graphsvc.core.bm25.score_bodies` of every body held, bit for bit."""
        stats = self.stats(query)
        # score_bodies's statistics: a body here holds a term only where its posting
        # counts it, so each document frequency and the body count are the mirror's.
        idf = {t: bm25_idf(stats.docs, df) for t, df in stats.df.items()}
        bound = sum(idf[t] for t in query.terms) + sum(idf[x] + idf[y] for x, y, _ in query.pairs)
        scores = np.zeros(len(self._slot_atom))
        if not any(stats.df.values()):
            return MirrorBM25(scores, bound, stats)
        # score_bodies over every body holding a term, a term at a time over all of
        # them: per body the same float operations in the same order (terms, then
        # pairs), so the same scores bit for bit (tests/unit/test_mirror_index.py).
        avg = stats.avg_length if stats.avg_length > 0 else 1.0
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * self._lengths / avg)
        for term in query.terms:
            slots, tf, _ = self._posting(term)
            scores[slots] += idf[term] * tf / (tf + norm[slots])
        for x, y, offset in query.pairs:
            slots, freq = self._sloppy(x, y, offset, slop)
            scores[slots] += (idf[x] + idf[y]) * freq / (freq + norm[slots])
        return MirrorBM25(scores, bound, stats)

    def scores_of(self, scored: MirrorBM25, atom_ids: Iterable[str]) -> dict[str, float]:
        """The BM25 of each head of ``atom_ids`` held here, from ``scored`` (this
        mirror's, unchanged since): what ``score_bodies`` gives their bodies."""
        slot_of = self._slot_of
        slots = [(a, slot_of[a]) for a in atom_ids if a in slot_of]
        values = scored.scores[[s for _, s in slots]].tolist()
        return {a: v for (a, _), v in zip(slots, values, strict=True)}

    def lexical(
        self,
        query: QueryTerms,
        *,
        slop: int,
        limit: int,
        include_archived: bool,
        scored: MirrorBM25 | None = None,
    ) -> list[list[Any]]:
        """The best ``limit`` bodies holding a query term, as fulltext rows
        ``[atomId, rev, score, atomisedInto, archivedAt, None, text]`` (no embedding:
        :meth:`cosines` gives their semantic signal); ``scored``: :meth:`bm25` of
        ``query``, when the caller has it."""
        if scored is None:
            scored = self.bm25(query, slop=slop)
        if not any(scored.stats.df.values()):
            return []
        scores = scored.scores
        shown = scores > 0.0
        if not include_archived:
            shown &= ~self._hidden
        found = np.flatnonzero(shown)
        if len(found) > limit:  # the best limit and every tie with the last of them
            kth = np.partition(scores[found], len(found) - limit)[len(found) - limit]
            found = found[scores[found] >= kth]
        ranked = sorted(
            ((float(scores[r]), cast(str, self._slot_atom[r])) for r in found.tolist()),
            key=lambda p: (-p[0], p[1]),
        )
        rows: list[list[Any]] = []
        for score, atom_id in ranked[:limit]:
            h = self._heads[atom_id]
            rows.append([atom_id, h.rev, score, h.atomised_into, h.archived_at, None, h.text])
        return rows

    def _posting(self, term: str) -> _Posting:
        """``term``'s postings as arrays: slots, term frequencies, and every occurrence
        as ``slot << 32 | position``, ascending."""
        found = self._arrays.get(term)
        if found is None:
            posting = self._postings.get(term, {})
            slots = np.fromiter(posting.keys(), dtype=np.int64, count=len(posting))
            counts = np.fromiter(map(len, posting.values()), dtype=np.int64, count=len(posting))
            positions = np.fromiter(
                itertools.chain.from_iterable(posting.values()),
                dtype=np.int64,
                count=int(counts.sum()),
            )
            occurrences = np.sort((np.repeat(slots, counts) << 32) | positions)
            found = (slots, counts.astype(np.float64), occurrences)
            if posting:  # kept for the mirror's terms only, never for any query's word
                self._arrays[term] = found
        return found

    def _sloppy(
        self, x: str, y: str, offset: int, slop: int
    ) -> tuple[np.ndarray[Any, np.dtype[np.int64]], _Matrix]:
        """:func:`graphsvc.core.bm25.sloppy_freq` of every body holding ``x`` near
        ``y``: the slots with a positive frequency, and those frequencies. Each
        occurrence of ``x`` counts ``1 / (1 + d)`` for the nearest ``y`` at
        ``d = |pos_y − pos_x − offset| ≤ slop``, summed in position order per body
        (as sloppy_freq adds them)."""
        xs, ys = self._posting(x)[2], self._posting(y)[2]
        none = (np.zeros(0, dtype=np.int64), np.zeros(0))
        if not len(xs) or not len(ys):
            return none
        wanted = xs + offset  # the same slot (positions stay far below 2**32)
        at = np.searchsorted(ys, wanted)
        best = np.full(len(xs), slop + 1, dtype=np.int64)
        for near in (np.minimum(at, len(ys) - 1), np.maximum(at - 1, 0)):
            same = (ys[near] >> 32) == (xs >> 32)
            best = np.where(same, np.minimum(best, np.abs(ys[near] - wanted)), best)
        close = best <= slop
        if not close.any():
            return none
        slots = xs[close] >> 32
        steps = 1.0 / (1.0 + best[close].astype(np.float64))
        freq = np.zeros(len(self._slot_atom))
        np.add.at(freq, slots, steps)  # in array order: per body, position order
        found = np.unique(slots)
        return found, freq[found]

    def semantic(
        self, vector: Sequence[float], *, limit: int, include_archived: bool
    ) -> list[dict[str, Any]]:
        """The best ``limit`` heads by Neo4j's cosine to ``vector`` (ties by atomId),
        as rows of ``search/vector_candidates_small``."""
        if len(vector) == self._dimension:
            q = np.asarray(vector, dtype=np.float64)
            q_norm = float(np.linalg.norm(q))
            if q_norm == 0.0:
                return []
            used = self._rows_used
            denominators = self._norms[:used] * q_norm
            live = denominators > 0.0
            dots = self._matrix[:used] @ q
            cosines = np.where(live, (1.0 + dots / np.where(live, denominators, 1.0)) / 2.0, -1.0)
            shown = cosines >= 0.0  # a row without a vector (or a removed head's) is -1
            if not include_archived:
                shown &= ~self._row_hidden[:used]
            rows = np.flatnonzero(shown)
            scores = np.minimum(1.0, np.maximum(0.0, cosines[rows]))
            # The best limit and every tie with the last of them, chosen in numpy: the
            # subject's rows as Python pairs cost more than the product itself.
            if len(rows) > limit:
                cut = len(rows) - max(limit, 1)
                keep = scores >= np.partition(scores, cut)[cut]
                rows, scores = rows[keep], scores[keep]
            atom_at = self._atom_at
            kept = [
                (score, cast(str, atom_at[r]))
                for score, r in zip(scores.tolist(), rows.tolist(), strict=True)
            ]
        else:
            found = self.cosines(vector, list(self._heads))
            kept = [
                (s, a) for a, s in found.items() if include_archived or not self._heads[a].hidden
            ]
        kept.sort(key=lambda p: (-p[0], p[1]))
        out: list[dict[str, Any]] = []
        for score, atom_id in kept[:limit]:
            head = self._heads[atom_id]
            out.append(
                {
                    "atomId": atom_id,
                    "rev": head.rev,
                    "semantic": score,
                    "atomisedInto": head.atomised_into,
                    "archivedAt": head.archived_at,
                    "text": head.text,
                }
            )
        return out

    def cosines(self, vector: Sequence[float], atom_ids: Iterable[str]) -> dict[str, float]:
        """Neo4j's cosine of ``vector`` and each head of ``atom_ids`` that has an
        embedding of its length (none for the others, as ACT-1's missing signal)."""
        ids = [a for a in atom_ids if a in self._heads]
        if len(vector) != self._dimension:
            vectors = [self._heads[a].vector().tolist() for a in ids]
            scored = zip(ids, neo4j_cosines(vector, vectors), strict=True)
            return {a: s for a, s in scored if s is not None}
        q = np.asarray(vector, dtype=np.float64)
        q_norm = float(np.linalg.norm(q))
        rows = [(a, self._row_of[a]) for a in ids if a in self._row_of]
        if q_norm == 0.0 or not rows:
            return {}
        index = [r for _, r in rows]
        dots = (self._matrix[index] @ q).tolist()
        out: dict[str, float] = {}
        for (atom_id, row), d in zip(rows, dots, strict=True):
            n = float(self._norms[row]) * q_norm
            if n > 0.0:
                out[atom_id] = min(1.0, max(0.0, (1.0 + d / n) / 2.0))
        return out
