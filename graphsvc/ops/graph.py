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
- **Signatures** of derives_from edges are checked by :func:`signature_status`
  against the public keys it is given (the host layer's key ring, SIG-4):
  ``verified``, ``invalid`` (the signature does not match the stored edge) or
  ``unknown_key``.
- Nothing here writes: no body, link or usage state changes (CORE-2).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from graphsvc.core.binding import Binding
from graphsvc.core.signing import SignableLink, verify_link
from graphsvc.errors import GraphsvcError, InvalidInputError
from graphsvc.ops.guards import refuse_if_purge_pending
from graphsvc.store import graph as store

if TYPE_CHECKING:
    from graphsvc.service import Service
    from graphsvc.settings import Settings

__all__ = [
    "GraphReader",
    "SignatureStatus",
    "page_size",
    "signature_status",
]

Row = dict[str, Any]
SignatureStatus = Literal["verified", "invalid", "unknown_key"]


def page_size(settings: Settings, first: int | None) -> int:
    """The validated page size of a connection.

    Raises:
        InvalidInputError: ``first`` outside ``0..graph_first_max``.
    """
    if first is None:
        return settings.graph_first_default
    if isinstance(first, bool) or not 0 <= first <= settings.graph_first_max:
        raise InvalidInputError(f"first must be in 0..{settings.graph_first_max}")
    return first


def signature_status(subject: str, edge: Row, public_keys: dict[str, bytes]) -> SignatureStatus:
    """Check one stored derives_from edge (SIG-1) against the known public keys."""
    key = public_keys.get(str(edge.get("keyId")))
    if key is None:
        return "unknown_key"
    try:
        link = SignableLink(
            subject=subject,
            from_atom_id=edge["fromAtomId"],
            from_rev=int(edge["fromRev"]),
            to_atom_id=edge["toAtomId"],
            to_rev=int(edge["toRev"]),
            signed_at=edge["signedAt"],
            key_id=edge["keyId"],
        )
    except (GraphsvcError, KeyError, TypeError, ValueError):
        return "invalid"
    signature = edge.get("signature")
    if not isinstance(signature, str) or not verify_link(key, link, signature):
        return "invalid"
    return "verified"


class GraphReader:
    """Batched reads for one caller (its subject filters every query).

    Args:
        service: the service (its database and settings).
        binding: the caller.
    """

    def __init__(self, service: Service, binding: Binding) -> None:
        self.service = service
        self.binding = binding
        self.subject = binding.subject

    def check_open(self) -> None:
        """Raises PurgePendingError while a purge of the subject is unfinished (LNK-6)."""
        refuse_if_purge_pending(self.service.db, self.subject)

    def page_size(self, first: int | None) -> int:
        """See :func:`page_size`."""
        return page_size(self.service.settings, first)

    def atoms(self, atom_ids: Sequence[str]) -> dict[str, Row]:
        return store.atoms(self.service.db, self.subject, atom_ids)

    def atoms_page(
        self, *, after: str | None, state: str | None, text: str | None, limit: int
    ) -> list[Row]:
        if text is not None and len(text) > 1024:
            raise InvalidInputError("text: at most 1024 characters")
        return store.atoms_page(
            self.service.db, self.subject, after=after, state=state, text=text, limit=limit
        )

    def revisions(self, refs: Sequence[tuple[str, int]]) -> dict[tuple[str, int], Row]:
        return store.revisions(self.service.db, self.subject, refs)

    def revision_pages(self, keys: Sequence[Row]) -> dict[str, list[Row]]:
        return store.revision_pages(self.service.db, self.subject, keys)

    def link_pages(self, keys: Sequence[Row]) -> dict[str, list[Row]]:
        return store.link_pages(self.service.db, self.subject, keys)

    def incoming_pages(self, keys: Sequence[Row]) -> dict[str, list[Row]]:
        return store.incoming_pages(self.service.db, self.subject, keys)

    def cited_by_pages(self, keys: Sequence[Row]) -> dict[str, list[Row]]:
        return store.cited_by_pages(self.service.db, self.subject, keys)

    def citations(self, refs: Sequence[tuple[str, int]]) -> dict[tuple[str, int], list[Row]]:
        return store.citations(self.service.db, self.subject, refs)

    def lineage_of(self, refs: Sequence[tuple[str, int]]) -> dict[tuple[str, int], Row]:
        return store.lineage_of(self.service.db, self.subject, refs)

    def sources(self, keys: Sequence[str]) -> dict[str, Row]:
        return store.sources(self.service.db, self.subject, keys)

    def source_lookup(self, uri: str, version: str | None, digest: str | None) -> Row | None:
        if not 1 <= len(uri) <= 4096:
            raise InvalidInputError("uri must be 1..4096 characters")
        return store.source_lookup(self.service.db, self.subject, uri, version, digest)
