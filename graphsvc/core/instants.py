"""Instants as the store keeps them, and as they leave the service (no clock here:
the caller gives the moment).

The store keeps ``datetime.isoformat()`` in UTC (``…+00:00``), and its queries
compare those strings, so that form never changes (:func:`as_of_instant`). Every
surface answers the same instants in one spelling, UTC with microseconds and ``Z``
(``2026-12-07T14:25:07.123456Z``, docs/agents.md "Vocabulary"): :func:`utc_z` for
one value, :func:`with_utc_z` for a JSON document. Inputs take either form.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, TypeVar

from graphsvc.errors import InvalidInputError

__all__ = ["as_of_instant", "utc_z", "with_utc_z"]

T = TypeVar("T")

# A stored instant: ISO-8601 in UTC, with or without a fraction.
_STORED = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00:00")
# Keys under which a JSON document holds instants (``createdAt``, ``asOf``, ``dueBy``,
# a change's ``at``); only a value in the stored form is rewritten, so a link's
# ``at: "observed"`` or text under any other key is left as it is.
_TIME_KEYS = frozenset({"asOf", "since", "until", "dueBy", "at"})


def as_of_instant(moment: datetime | None, what: str = "the instant") -> str | None:
    """The stored form of an ``asOf`` instant: ISO-8601 in UTC with microseconds.

    Stored ``createdAt`` values are ``datetime.isoformat()`` in UTC (``+00:00``), so
    string order is time order: a stored time without a fraction (``…:05+00:00``)
    sorts before the same second with one (``…:05.000000+00:00``), as ``+`` sorts
    before ``.``. A moment without a time zone is taken as UTC.

    Raises:
        InvalidInputError: the moment in UTC falls before year 1 or after 9999
            (``0001-01-01T00:00:00+14:00``): no ``datetime`` holds it.
    """
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC).isoformat(timespec="microseconds")
    except (OverflowError, ValueError):
        raise InvalidInputError(
            f"{what} is outside the representable range (years 1 to 9999 in UTC)",
            details={"argument": what},
        ) from None


def utc_z(value: T) -> T:
    """An instant as it leaves the service: ``…:05+00:00`` becomes ``…:05.000000Z``,
    always with six fraction digits, so that string order is time order (a ``Z``
    sorts after a ``.``); anything else (None, a number, another string) is returned
    as it is."""
    if isinstance(value, str) and (m := _STORED.fullmatch(value)):
        return f"{m[1]}.{(m[2] or '').ljust(6, '0')}Z"  # type: ignore[return-value]
    return value


def _is_time_key(key: object) -> bool:
    return isinstance(key, str) and (key.endswith("At") or key in _TIME_KEYS)


def with_utc_z(document: T) -> T:
    """``document`` (JSON: dicts, lists, scalars) with every instant held under a time
    key (one ending in ``At``, or ``asOf``, ``since``, ``until``, ``dueBy``, ``at``)
    in the ``Z`` form; a new document, the given one is not changed."""
    value: Any = document
    if isinstance(value, dict):
        return {  # type: ignore[return-value]
            k: utc_z(v) if _is_time_key(k) and isinstance(v, str) else with_utc_z(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [with_utc_z(v) for v in value]  # type: ignore[return-value]
    return document
