"""The typed graph's reads (docs/graphql.md): batched, subject-bound, read-only.

:class:`GraphReader` is what the GraphQL DataLoaders call: one method per batch,
each one named query (``cypher/graph/``) filtered by the caller's subject. Things
that do not exist in the subject — never written, purged, or another subject's —
are missing from every answer alike, so no answer tells them apart (API-2).

Decisions this module makes (each is tested):

- **PURGE_PENDING** (LNK-6): the first root field of a request checks the
  subject's purge marker once (:meth:`GraphReader.check_open`); nested fields of
  the same request do not check again.
- **Page sizes**: ``first`` defaults to ``graph_first_default`` and may be
  ``0..graph_first_max``; anything else is INVALID_INPUT.
- **Signatures** of derives_from edges are returned as stored; the typed graph
  checks them with :func:`graphsvc.core.signing.signature_status` against the
  deployment's public keys (SIG-4, :meth:`graphsvc.service.Service.public_keys`):
  ``verified``, ``invalid`` (the signature does not match the stored edge) or
  ``unknown_key``.
- Nothing here writes: no body, link or usage state changes (CORE-2).
- **asOf** (docs/time-travel.md): a reader made with ``as_of`` (ISO-8601 UTC, see
  :func:`graphsvc.core.instants.as_of_instant`) answers atoms, revisions, their
  pages, links, incoming links and citations as they stood at that instant, and
  stamps every row it returns with ``asOf`` so what is loaded below it (a link's
  target, a revision's links) is read at the same instant. Sources, ``citedBy``,
  lineage edges and entities stay "now".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from graphsvc.core.binding import Binding
from graphsvc.core.entity_keys import entity_key
from graphsvc.core.views import EntityView, MentionView
from graphsvc.errors import InvalidInputError
from graphsvc.ops.guards import refuse_if_purge_pending
from graphsvc.store import entity_views
from graphsvc.store import graph as store
from graphsvc.store.connection import Database

if TYPE_CHECKING:
    from graphsvc.settings import GraphQLSettings

__all__ = ["GraphReader", "page_size"]

Row = dict[str, Any]


def _stamp(row: Row, as_of: str) -> Row:
    """``row`` and the rows nested in it, marked as read at ``as_of``."""
    row["asOf"] = as_of
    for key in ("head", "targetRevision"):
        nested = row.get(key)
        if isinstance(nested, dict):
            nested["asOf"] = as_of
    target = row.get("targetAtom")
    if isinstance(target, dict):
        _stamp(target, as_of)
    return row


def page_size(sizes: GraphQLSettings, first: int | None) -> int:
    """The validated page size of a connection.

    Raises:
        InvalidInputError: ``first`` outside ``0..max_first``.
    """
    if first is None:
        return sizes.default_first
    if isinstance(first, bool) or not 0 <= first <= sizes.max_first:
        raise InvalidInputError(f"first must be in 0..{sizes.max_first}")
    return first


class GraphReader:
    """Batched reads for one caller (its subject filters every query).

    Args:
        db: the store.
        binding: the caller.
        pages: the page sizes of connections (``default_first``, ``max_first``).
    """

    def __init__(
        self, db: Database, binding: Binding, pages: GraphQLSettings, as_of: str | None = None
    ) -> None:
        self.db = db
        self.binding = binding
        self.subject = binding.subject
        self.pages = pages
        self.as_of = as_of

    def at(self, as_of: str | None) -> GraphReader:
        """The same caller's reader at another instant (None: now)."""
        return GraphReader(self.db, self.binding, self.pages, as_of)

    def _stamped(self, rows: dict[Any, Row]) -> dict[Any, Row]:
        if self.as_of is not None:
            for r in rows.values():
                _stamp(r, self.as_of)
        return rows

    def _stamped_pages(self, pages: dict[str, list[Row]]) -> dict[str, list[Row]]:
        if self.as_of is not None:
            for rows in pages.values():
                for r in rows:
                    _stamp(r, self.as_of)
        return pages

    def check_open(self) -> None:
        """Raises PurgePendingError while a purge of the subject is unfinished (LNK-6)."""
        refuse_if_purge_pending(self.db, self.subject)

    def page_size(self, first: int | None) -> int:
        """See :func:`page_size`."""
        return page_size(self.pages, first)

    def atoms(self, atom_ids: Sequence[str]) -> dict[str, Row]:
        return self._stamped(store.atoms(self.db, self.subject, atom_ids, self.as_of))

    def atoms_page(
        self, *, after: str | None, state: str | None, text: str | None, limit: int
    ) -> list[Row]:
        if text is not None and len(text) > 1024:
            raise InvalidInputError("text: at most 1024 characters")
        rows = store.atoms_page(
            self.db,
            self.subject,
            after=after,
            state=state,
            text=text,
            limit=limit,
            as_of=self.as_of,
        )
        return [_stamp(r, self.as_of) for r in rows] if self.as_of is not None else rows

    def revisions(self, refs: Sequence[tuple[str, int]]) -> dict[tuple[str, int], Row]:
        return self._stamped(store.revisions(self.db, self.subject, refs, self.as_of))

    def revision_pages(self, keys: Sequence[Row]) -> dict[str, list[Row]]:
        return self._stamped_pages(store.revision_pages(self.db, self.subject, keys, self.as_of))

    def link_pages(self, keys: Sequence[Row]) -> dict[str, list[Row]]:
        return self._stamped_pages(store.link_pages(self.db, self.subject, keys, self.as_of))

    def incoming_pages(self, keys: Sequence[Row]) -> dict[str, list[Row]]:
        return self._stamped_pages(store.incoming_pages(self.db, self.subject, keys, self.as_of))

    def cited_by_pages(self, keys: Sequence[Row]) -> dict[str, list[Row]]:
        return store.cited_by_pages(self.db, self.subject, keys)

    def citations(self, refs: Sequence[tuple[str, int]]) -> dict[tuple[str, int], list[Row]]:
        return store.citations(self.db, self.subject, refs, self.as_of)

    def lineage_of(self, refs: Sequence[tuple[str, int]]) -> dict[tuple[str, int], Row]:
        return store.lineage_of(self.db, self.subject, refs)

    def sources(self, keys: Sequence[str]) -> dict[str, Row]:
        return store.sources(self.db, self.subject, keys)

    def source_lookup(self, uri: str, version: str | None, digest: str | None) -> Row | None:
        if not 1 <= len(uri) <= 4096:
            raise InvalidInputError("uri must be 1..4096 characters")
        return store.source_lookup(self.db, self.subject, uri, version, digest)

    # ------------------------------------------------------------ entity index (ENT-5)

    def entities_of(self, atom_ids: Sequence[str]) -> dict[str, list[EntityView]]:
        """atomId → the entities its current head mentions."""
        return entity_views.entities_of_atoms(self.db, self.subject, atom_ids)

    def entities_by_keys(self, keys: Sequence[str]) -> dict[str, EntityView]:
        return entity_views.entities_by_keys(self.db, self.subject, keys)

    def entities_page(
        self, *, query: str | None, type_: str | None, after: str | None, limit: int
    ) -> list[EntityView]:
        """A page of the subject's entities; ``query`` is normalised like a key.

        Raises:
            InvalidInputError: a query over 1024 characters.
        """
        if query is not None and len(query) > 1024:
            raise InvalidInputError("query: at most 1024 characters")
        key = entity_key(query) if query is not None else None
        return entity_views.entities_page(
            self.db, self.subject, query=key or None, type_=type_, after=after, limit=limit
        )

    def mentions_page(self, key: str, *, after: str | None, limit: int) -> list[MentionView]:
        return entity_views.mentions_page(self.db, self.subject, key, after=after, limit=limit)
