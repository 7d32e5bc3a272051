"""The change feed (docs/time-travel.md): a subject's write operations in commit order.

``changes`` pages the records of :mod:`graphsvc.store.changes` by sequence number
(keyset: a page after number *n* is the same whenever it is read, since numbers are
given in commit order and never reused), optionally within a time window
``[since, until)``. Decisions this module makes:

- ``first`` is ``0..max_first`` (default ``default_first``), else INVALID_INPUT;
  ``since`` after ``until`` is INVALID_INPUT.
- While a purge of the subject is unfinished the feed answers PURGE_PENDING (LNK-6):
  until the erase step commits, earlier records still name the atoms being purged.
- Nothing here writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphsvc.core.binding import Binding
from graphsvc.core.views import ChangeRecord
from graphsvc.errors import InvalidInputError
from graphsvc.ops.guards import refuse_if_purge_pending
from graphsvc.store.changes import changes_page
from graphsvc.store.connection import Database

__all__ = ["ChangeRecord", "ChangesPage", "changes"]


@dataclass(frozen=True)
class ChangesPage:
    """One page of the feed and whether more records follow it."""

    records: list[ChangeRecord]
    has_next: bool


def changes(
    db: Database,
    binding: Binding,
    *,
    since: str | None,
    until: str | None,
    after: int | None,
    first: int,
    max_first: int,
) -> ChangesPage:
    """The caller's change records after sequence number ``after``, in commit order.

    Args:
        db: the store.
        binding: the caller (its subject only).
        since: only records committed at or after this instant (ISO-8601 UTC).
        until: only records committed before this instant.
        after: the sequence number of the last record already seen.
        first: the page size.
        max_first: the largest page size.

    Raises:
        InvalidInputError: ``first`` out of range, ``after`` negative, or ``since``
            after ``until``.
        PurgePendingError: a purge of the subject has not finished.
    """
    if isinstance(first, bool) or not 0 <= first <= max_first:
        raise InvalidInputError(f"first must be in 0..{max_first}")
    if after is not None and after < 0:
        raise InvalidInputError("after must be a cursor of this feed")
    if since is not None and until is not None and since > until:
        raise InvalidInputError("since must not be after until")
    refuse_if_purge_pending(db, binding.subject)
    rows = changes_page(db, binding.subject, since=since, until=until, after=after, limit=first + 1)
    return ChangesPage(records=rows[:first], has_next=len(rows) > first)
