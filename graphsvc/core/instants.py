"""Instants as the store keeps them (no clock here: the caller gives the moment)."""

from __future__ import annotations

from datetime import UTC, datetime

from graphsvc.errors import InvalidInputError

__all__ = ["as_of_instant"]


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
