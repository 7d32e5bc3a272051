"""A write batch's sizes checked on its raw JSON, before any parsing (API-3, WR-7).

Coercing 100,000 links into objects costs seconds before ``validate_plan`` could say
BUDGET_EXCEEDED; counting list lengths in the raw value costs microseconds. GraphQL
(:class:`graphsvc.api.write_limits.WriteBatchGate`) and MCP (the ``write`` tool) call it
on what they received; ``validate_plan`` still checks everything.
"""

from __future__ import annotations

from typing import Any

from graphsvc.core.write_plan import Limits
from graphsvc.errors import BudgetExceededError

__all__ = ["check_batch_sizes"]


def check_batch_sizes(changes: Any, limits: Limits) -> None:
    """Raises BudgetExceededError for too many changes, links or sources."""
    if not isinstance(changes, list):
        return
    if len(changes) > limits.max_changes:
        raise BudgetExceededError(
            f"batch has {len(changes)} changes; the limit is {limits.max_changes}",
            details={"limit": "changes", "max": limits.max_changes},
        )
    for change in changes:
        if not isinstance(change, dict):
            continue
        cid = change.get("id")
        where = f"change {cid!r}: " if isinstance(cid, str) else ""
        details: dict[str, Any] = {"changeId": cid} if isinstance(cid, str) else {}
        content = change.get("content")
        links = content.get("links") if isinstance(content, dict) else None
        if isinstance(links, list) and len(links) > limits.max_links:
            raise BudgetExceededError(
                f"{where}{len(links)} links; the limit is {limits.max_links}",
                details={**details, "limit": "links", "max": limits.max_links},
            )
        sources = change.get("sources")
        if isinstance(sources, list) and len(sources) > limits.max_sources:
            raise BudgetExceededError(
                f"{where}{len(sources)} sources; the limit is {limits.max_sources}",
                details={**details, "limit": "sources", "max": limits.max_sources},
            )
