"""What a caller asks of ``search``, ``read`` and ``inspect``: one typed value each.

Every edge builds the request once from its own input (GraphQL arguments, MCP
arguments, CLI flags) and hands it to :class:`graphsvc.service.Service`, which hands
it to the use case (:mod:`graphsvc.ops.search`, :mod:`graphsvc.ops.read`,
:mod:`graphsvc.ops.inspect`). The CLI's path to a running server turns the same
value into the GraphQL operation's variables (``graphql_variables()``).

A field left ``None`` takes the deployment's default (``GRAPHSVC_DEPTH``,
``GRAPHSVC_SEARCH_LIMIT``, ...). The values are checked where the defaults and
ranges are known, in the use case against the settings' limits (INVALID_INPUT);
building a request checks nothing, so every edge answers the same error the same way.

Standard library only: the CLI's fast path imports this module without the
database driver, the models or pydantic.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar, cast

__all__ = ["InspectRequest", "ReadRequest", "SearchRequest"]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


class _Operation:
    """What the three requests share: their GraphQL variables."""

    # Fields whose value GraphQL spells as an enum value (upper case).
    _ENUMS: ClassVar[frozenset[str]] = frozenset()
    # Fields that are no argument: what the operation's selection asks for.
    SELECTION_FIELDS: ClassVar[frozenset[str]] = frozenset({"paged"})

    def graphql_variables(self) -> dict[str, Any]:
        """The variables of the GraphQL operation that asks for this request: every
        field under its argument's (camelCase) name, enums as GraphQL spells them."""
        out: dict[str, Any] = {}
        for f in fields(cast(Any, self)):
            if f.name in self.SELECTION_FIELDS:
                continue
            value = getattr(self, f.name)
            if f.name in self._ENUMS and value is not None:
                value = str(value).upper()
            out[_camel(f.name)] = value
        return out


@dataclass(frozen=True)
class SearchRequest(_Operation):
    """SPEC §5 ``search``: ranked atoms for ``query``.

    Attributes:
        query: what to look for, 1..10000 characters.
        depth: retrieval depth (default ``GRAPHSVC_DEPTH``).
        limit: hits per page (default ``GRAPHSVC_SEARCH_LIMIT``).
        include_archived: show archived parents too.
        cursor: the previous page's cursor.
        paged: whether the caller can ask for a next page (GraphQL: whether the
            operation selects ``cursor``). When not, a first page stores no
            evaluation and gives no cursor: nothing is written for a page nobody
            can ask for (CUR-1 holds for every cursor given).
    """

    query: str
    depth: int | None = None
    limit: int | None = None
    include_archived: bool = False
    cursor: str | None = None
    paged: bool = True


@dataclass(frozen=True)
class ReadRequest(_Operation):
    """SPEC §8 ``read``: a token-budgeted, dependency-complete read for ``query``.

    Attributes:
        query: what to read about, 1..10000 characters.
        memory_token_budget: the most tokens (cl100k_base) the text may take.
        depth, include_archived, cursor, paged: as :class:`SearchRequest`'s.
        limit: roots per page (default ``GRAPHSVC_READ_LIMIT``).
    """

    query: str
    memory_token_budget: int
    depth: int | None = None
    limit: int | None = None
    include_archived: bool = False
    cursor: str | None = None
    paged: bool = True


@dataclass(frozen=True)
class InspectRequest(_Operation):
    """SPEC §7 ``inspect``: one revision and its one-hop neighbourhood.

    Attributes:
        atom_id: the atom to inspect.
        rev: the revision (default: the current head, or the head as of ``as_of``).
        version: ``observed`` (links bind as stored) or ``logical`` (neighbours at head).
        direction: ``incoming``, ``outgoing`` or ``both``.
        roles: only links of these roles (``[]``: no neighbours).
        limit: neighbours per page (default ``GRAPHSVC_INSPECT_LIMIT``; ``0``: root only).
        cursor: the previous page's cursor.
        range_start: first body byte to return (UTF-8).
        range_end: byte after the last one to return.
        as_of: the graph as of this instant (ISO-8601 UTC, docs/time-travel.md).
    """

    atom_id: str
    rev: int | None = None
    version: str = "observed"
    direction: str = "both"
    roles: list[str] | None = None
    limit: int | None = None
    cursor: str | None = None
    range_start: int | None = None
    range_end: int | None = None
    as_of: str | None = None

    _ENUMS = frozenset({"version", "direction"})
