"""One set of DataLoaders per request (strawberry's DataLoader), for the typed graph.

Every field of the typed graph loads through these, so the loads of one level of
a query become one Cypher round trip per kind of thing, whatever the number of
parents: a query over 100 atoms three levels deep costs a handful of round
trips, not one per field. Each loader runs its batch in a worker thread (the
driver blocks). Pages are keyed by their arguments, so two parents asking for
the same page share one load.

A query with ``asOf`` (docs/time-travel.md) gets one more set of loaders per instant
(:func:`loaders_of` with ``as_of``): rows read at an instant carry ``asOf``, and the
fields below them load through the same instant's loaders, so a walk never mixes
"now" and "then". The purge check stays one per request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from strawberry.dataloader import DataLoader, DefaultCache
from strawberry.types import Info

from graphsvc.api.context import Context, binding_of, service_of
from graphsvc.core.views import EntityView

if TYPE_CHECKING:
    from graphsvc.service import GraphReader

__all__ = ["MISSING", "GraphLoaders", "cached", "loaders_for", "loaders_of", "then"]

Row = dict[str, Any]
K = TypeVar("K")
V = TypeVar("V")

RevKey = tuple[str, int]
# (atomId, before rev, limit)
RevPageKey = tuple[str, int | None, int]
# (atomId, rev, role, after ordinal, limit, with the targets' citations)
LinkPageKey = tuple[str, int, str | None, int | None, int, bool]
# (atomId, role, at, after atomId, after ordinal, limit)
IncomingKey = tuple[str, str | None, str | None, str | None, int | None, int]
# (sourceKey, uri, after atomId, after ordinal, limit)
CitedByKey = tuple[str | None, str | None, str | None, int | None, int]


class _Missing:
    """Not in a loader's cache yet (distinct from a cached ``None``: not found)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


def cached(loader: DataLoader[K, V], key: K) -> V | _Missing:
    """What ``loader`` already holds for ``key`` (loaded or primed), without awaiting.

    A resolver whose value is already known answers synchronously: graphql-core then
    completes it without a coroutine, a future and an event-loop turn per field.
    """
    future = loader.cache_map.get(key)
    if future is None or not future.done() or future.cancelled() or future.exception():
        return MISSING
    value: V = future.result()
    return value


W = TypeVar("W")


def then(load: Awaitable[V], convert: Callable[[V], W]) -> W:
    """``convert`` of a load's value: now when the load is done, else a future of it.

    For resolvers that only reshape what a loader gives: declared synchronous, they
    return the value itself or a future that graphql-core awaits, so a field costs
    no coroutine of its own (strawberry's async resolver path is about twice a sync
    one per field). The future is typed as its value for strawberry's schema.
    """
    source = asyncio.ensure_future(load)
    if source.done():
        return convert(source.result())
    out: asyncio.Future[W] = source.get_loop().create_future()

    def done(f: asyncio.Future[V]) -> None:
        if out.done():
            return
        if f.cancelled():
            out.cancel()
        elif (failed := f.exception()) is not None:
            out.set_exception(failed)
        else:
            try:
                out.set_result(convert(f.result()))
            except Exception as exc:  # delivered to the awaiting field as its error
                out.set_exception(exc)

    source.add_done_callback(done)
    return cast(W, out)


def _loader(
    fetch: Callable[[list[K]], dict[K, V]], default: Callable[[], V | None]
) -> DataLoader[K, V | None]:
    async def load(keys: list[K]) -> list[V | None]:
        found = await asyncio.to_thread(fetch, keys)
        return [found.get(k, default()) for k in keys]

    # Our own cache object (the constructor's public ``cache_map``): cached() peeks
    # into what we handed the loader, not into the loader.
    return DataLoader(load_fn=load, cache_map=DefaultCache())


def _paged(
    fetch: Callable[[Sequence[Row]], dict[str, list[Row]]], to_params: Callable[[Any], Row]
) -> Callable[[list[Any]], dict[Any, list[Row]]]:
    def run(keys: list[Any]) -> dict[Any, list[Row]]:
        params = [{"key": str(i), **to_params(k)} for i, k in enumerate(keys)]
        found = fetch(params)
        return {k: found.get(str(i), []) for i, k in enumerate(keys)}

    return run


PublicKeys = Callable[[], dict[str, bytes]]


class GraphLoaders:
    """The loaders of one request, bound to the caller's subject; ``public_keys``
    loads the deployment's public keys (:meth:`graphsvc.service.Service.public_keys`)."""

    def __init__(
        self, reader: GraphReader, public_keys: PublicKeys, base: GraphLoaders | None = None
    ) -> None:
        self.reader = reader
        self.load_public_keys = public_keys
        # The request's "now" loaders, whose purge check an instant's loaders share.
        self.base = base
        self._open: asyncio.Task[None] | None = None
        self._keys: dict[str, bytes] | None = None
        # Look-ahead answers per field node of the document (see graph_lookahead).
        self.lookahead: dict[int, bool] = {}
        self.atom: DataLoader[str, Row | None] = _loader(reader.atoms, lambda: None)
        self.revision: DataLoader[RevKey, Row | None] = _loader(reader.revisions, lambda: None)
        self.citations: DataLoader[RevKey, list[Row] | None] = _loader(reader.citations, list)
        self.lineage: DataLoader[RevKey, Row | None] = _loader(
            reader.lineage_of, lambda: {"derivesFrom": [], "derivedInto": []}
        )
        self.source: DataLoader[str, Row | None] = _loader(reader.sources, lambda: None)
        # The entity index (ENT-5): atomId -> the entities its head mentions.
        self.entities: DataLoader[str, list[EntityView] | None] = _loader(reader.entities_of, list)
        self.revision_page: DataLoader[RevPageKey, list[Row] | None] = _loader(
            _paged(
                reader.revision_pages,
                lambda k: {"atomId": k[0], "before": k[1], "limit": k[2]},
            ),
            list,
        )
        self.link_page: DataLoader[LinkPageKey, list[Row] | None] = _loader(
            _paged(
                reader.link_pages,
                lambda k: {
                    "atomId": k[0],
                    "rev": k[1],
                    "role": k[2],
                    "after": k[3],
                    "limit": k[4],
                    "withCitations": k[5],
                },
            ),
            list,
        )
        self.incoming_page: DataLoader[IncomingKey, list[Row] | None] = _loader(
            _paged(
                reader.incoming_pages,
                lambda k: {
                    "atomId": k[0],
                    "role": k[1],
                    "at": k[2],
                    "afterAtomId": k[3],
                    "afterOrdinal": k[4],
                    "limit": k[5],
                },
            ),
            list,
        )
        self.cited_by_page: DataLoader[CitedByKey, list[Row] | None] = _loader(
            _paged(
                reader.cited_by_pages,
                lambda k: {
                    "sourceKey": k[0],
                    "uri": k[1],
                    "afterAtomId": k[2],
                    "afterOrdinal": k[3],
                    "limit": k[4],
                },
            ),
            list,
        )

    async def open(self) -> None:
        """The request's one purge-pending check (LNK-6), shared by its root fields.

        Raises:
            PurgePendingError: a purge of the caller's subject has not finished.
        """
        if self.base is not None:
            await self.base.open()
            return
        if self._open is None:
            self._open = asyncio.ensure_future(asyncio.to_thread(self.reader.check_open))
        await asyncio.shield(self._open)

    async def opened(self, load: Awaitable[V]) -> V:
        """``load``'s answer once the request's purge check (:meth:`open`) has passed.

        The two run side by side (one round trip of latency instead of two); what
        ``load`` read is never shown while a purge is pending, and the purge check's
        refusal wins over any error of ``load``, as when the check ran first.

        Raises:
            PurgePendingError: a purge of the caller's subject has not finished.
        """
        check, value = await asyncio.gather(self.open(), load, return_exceptions=True)
        if isinstance(check, BaseException):
            raise check
        if isinstance(value, BaseException):
            raise value
        return value

    async def public_keys(self) -> dict[str, bytes]:
        """The deployment's public keys (loaded once per request, in a worker thread)."""
        if self._keys is None:
            self._keys = await asyncio.to_thread(self.load_public_keys)
        return self._keys

    def prime_atom(self, row: Row) -> None:
        """Remember an atom row (and its head) loaded by a page query."""
        self.atom.prime(row["atomId"], row)
        head = row["head"]
        self.revision.prime((head["atomId"], int(head["rev"])), head)

    def prime_revision(self, row: Row) -> None:
        self.revision.prime((row["atomId"], int(row["rev"])), row)

    def prime_citations(self, revision: Row, citations: list[Row | None]) -> None:
        """Remember a revision's citations loaded with it (a links page's targets)."""
        key = (revision["atomId"], int(revision["rev"]))
        self.citations.prime(key, [c for c in citations if c])


def loaders_of(info: Info, as_of: str | None = None) -> GraphLoaders:
    """The request's loaders, made on first use (the caller must be authenticated);
    with ``as_of`` (an instant in :func:`graphsvc.core.instants.as_of_instant`'s form) the
    loaders that read the graph as it stood then.

    Raises:
        UnauthenticatedError: no valid token (API-2).
    """
    ctx: Context = info.context
    found = ctx.__dict__.get("_graph_loaders")
    if found is None:
        service = service_of(info)
        found = GraphLoaders(service.graph_reader(binding_of(info)), service.public_keys)
        ctx.__dict__["_graph_loaders"] = found
    assert isinstance(found, GraphLoaders)
    if as_of is None:
        return found
    instants: dict[str, GraphLoaders] = ctx.__dict__.setdefault("_graph_loaders_at", {})
    at = instants.get(as_of)
    if at is None:
        at = GraphLoaders(found.reader.at(as_of), found.load_public_keys, base=found)
        instants[as_of] = at
    return at


def loaders_for(info: Info, row: Row, as_of: str | None = None) -> GraphLoaders:
    """The loaders for what lies below ``row``: at ``as_of`` when a field names one,
    else at the instant the row was read at (``row["asOf"]``; none: now)."""
    return loaders_of(info, as_of if as_of is not None else row.get("asOf"))
