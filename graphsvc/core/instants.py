"""Instants as the store keeps them (no clock here: the caller gives the moment)."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["as_of_instant"]


def as_of_instant(moment: datetime | None) -> str | None:
    """The stored form of an ``asOf`` instant: ISO-8601 in UTC with microseconds.

    Stored ``createdAt`` values are ``datetime.isoformat()`` in UTC (``+00:00``), so
    string order is time order: a stored time without a fraction (``…:05+00:00``)
    sorts before the same second with one (``…:05.000000+00:00``), as ``+`` sorts
    before ``.``. A moment without a time zone is taken as UTC.
    """
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")
