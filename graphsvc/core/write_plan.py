"""Pure validation of a write batch (SPEC §2) and its semantic fingerprint (IDEM-1).

``validate_plan`` checks everything that can be checked without the database:
shapes (WR-1, WR-2), size limits (BUDGET_EXCEEDED), one change per logical atom
(WR-3), local targets naming changes of this batch (WR-5), ranges, and that an
agent's changes carry a token (TOK-2). What needs the database (CAS, existing
targets, tokens' MACs and scope) is checked by the service and the store.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graphsvc.core.binding import Binding
from graphsvc.core.write_models import Change, Citation, LinkSpec
from graphsvc.errors import BudgetExceededError, InvalidInputError, TokenInvalidError

__all__ = ["Limits", "Plan", "plan_fingerprint", "validate_plan"]

_MAX_ROLE_CHARS = 256
_MAX_ID_CHARS = 256
_MAX_URI_CHARS = 4096


@dataclass(frozen=True)
class Limits:
    """Configured size limits of one write (SPEC §15)."""

    max_changes: int = 256
    max_body_bytes: int = 65_536
    max_links: int = 128
    max_sources: int = 128
    max_write_bytes: int = 2 * 1024 * 1024


@dataclass(frozen=True)
class Plan:
    """A validated batch: the changes and derived facts the store needs.

    Its idempotency fingerprint is :func:`plan_fingerprint` of the changes with the
    InputTokens' digests, computed where the tokens are opened (ops/write.py).
    """

    changes: tuple[Change, ...]

    @property
    def by_id(self) -> dict[str, Change]:
        return {c.id: c for c in self.changes}


def validate_plan(changes: Sequence[Change], binding: Binding, limits: Limits) -> Plan:
    """Check a batch without the database and return it as a Plan.

    Raises:
        InvalidInputError: empty batch, duplicate ids, missing links/sources, bad
            shapes, bad ranges, unknown local targets, two changes to one atom.
        BudgetExceededError: a configured size limit is exceeded.
        TokenInvalidError: an agent change carries no InputToken (TOK-2).
    """
    if not changes:
        raise InvalidInputError("changes must not be empty (WR-1)")
    if len(changes) > limits.max_changes:
        raise BudgetExceededError(
            f"batch has {len(changes)} changes; the limit is {limits.max_changes}",
            details={"limit": "changes", "max": limits.max_changes},
        )
    ids: set[str] = set()
    targets: dict[str, str] = {}
    total_bytes = 0
    for change in changes:
        _check_id(change.id)
        if change.id in ids:
            raise InvalidInputError(
                f"change id {change.id!r} appears twice (WR-1)", details={"changeId": change.id}
            )
        ids.add(change.id)
        total_bytes += _check_change(change, limits)
        if change.target is not None:
            other = targets.get(change.target.atom_id)
            if other is not None:
                raise InvalidInputError(
                    f"changes {other!r} and {change.id!r} both change atom "
                    f"{change.target.atom_id} (WR-3: one change per logical atom per batch)",
                    details={"changeId": change.id},
                )
            targets[change.target.atom_id] = change.id
        if binding.actor_kind == "agent" and not change.input:
            raise TokenInvalidError(
                f"change {change.id!r}: an agent change must carry an InputToken (TOK-2)",
                details={"changeId": change.id},
            )
    if total_bytes > limits.max_write_bytes:
        raise BudgetExceededError(
            f"batch text is {total_bytes} bytes; the limit is {limits.max_write_bytes}",
            details={"limit": "writeBytes", "max": limits.max_write_bytes},
        )
    for change in changes:
        for link in change.links or ():
            if link.local is not None and link.local not in ids:
                raise InvalidInputError(
                    f"change {change.id!r}: local target {link.local!r} names no change "
                    "of this batch (WR-5)",
                    details={"changeId": change.id},
                )
    return Plan(changes=tuple(changes))


def _check_id(change_id: str) -> None:
    if not isinstance(change_id, str) or not change_id or len(change_id) > _MAX_ID_CHARS:
        raise InvalidInputError("every change needs an id of 1..256 characters")


def _check_change(change: Change, limits: Limits) -> int:
    cid = change.id
    details = {"changeId": cid}
    if change.op not in ("create", "revise", "retire"):
        raise InvalidInputError(f"change {cid!r}: unknown op {change.op!r}", details=details)
    if change.op == "create" and change.target is not None:
        raise InvalidInputError(f"change {cid!r}: create takes no target", details=details)
    if change.op in ("revise", "retire") and change.target is None:
        raise InvalidInputError(
            f"change {cid!r}: {change.op} must name the observed target revision (WR-3)",
            details=details,
        )
    if change.target is not None and (not change.target.atom_id or change.target.rev < 1):
        raise InvalidInputError(f"change {cid!r}: target is not an issued AtomRef", details=details)
    if change.op == "retire":
        if change.text is not None or change.links is not None or change.sources is not None:
            raise InvalidInputError(
                f"change {cid!r}: retire takes no content or sources (WR-4 keeps them)",
                details=details,
            )
        return 0
    if change.text is None:
        raise InvalidInputError(f"change {cid!r}: content.text is required", details=details)
    if change.links is None:
        raise InvalidInputError(
            f"change {cid!r}: content.links must be given, even when empty (WR-2)",
            details=details,
        )
    if change.sources is None:
        raise InvalidInputError(
            f"change {cid!r}: sources must be given, even when empty (WR-2)", details=details
        )
    size = len(change.text.encode("utf-8"))
    if size > limits.max_body_bytes:
        raise BudgetExceededError(
            f"change {cid!r}: body is {size} bytes; the limit is {limits.max_body_bytes}",
            details={**details, "limit": "bodyBytes", "max": limits.max_body_bytes},
        )
    if len(change.links) > limits.max_links:
        raise BudgetExceededError(
            f"change {cid!r}: {len(change.links)} links; the limit is {limits.max_links}",
            details={**details, "limit": "links", "max": limits.max_links},
        )
    if len(change.sources) > limits.max_sources:
        raise BudgetExceededError(
            f"change {cid!r}: {len(change.sources)} sources; the limit is {limits.max_sources}",
            details={**details, "limit": "sources", "max": limits.max_sources},
        )
    _check_links(cid, change.links)
    _check_sources(cid, change.sources)
    return size


def _check_links(cid: str, links: tuple[LinkSpec, ...]) -> None:
    """Raises InvalidInputError on a link the store could not bind."""
    details = {"changeId": cid}
    for link in links:
        if not link.role or len(link.role) > _MAX_ROLE_CHARS:
            raise InvalidInputError(
                f"change {cid!r}: a link role must be 1..256 characters", details=details
            )
        if (link.ref is None) == (link.local is None):
            raise InvalidInputError(
                f"change {cid!r}: a link target needs exactly one of ref / local",
                details=details,
            )
        if link.ref is not None and (not link.ref.atom_id or link.ref.rev < 1):
            raise InvalidInputError(
                f"change {cid!r}: link target ref is not an issued AtomRef", details=details
            )
        if link.at not in ("logical", "observed"):
            raise InvalidInputError(
                f"change {cid!r}: link at must be logical or observed", details=details
            )


def _check_sources(cid: str, sources: tuple[Citation, ...]) -> None:
    """Raises InvalidInputError on a citation no reader could follow."""
    details = {"changeId": cid}
    for src in sources:
        if not src.uri or len(src.uri) > _MAX_URI_CHARS:
            raise InvalidInputError(
                f"change {cid!r}: a source needs a uri of 1..4096 characters", details=details
            )
        if src.range is not None:
            r = src.range
            if r.unit not in ("byte", "char", "line"):
                raise InvalidInputError(
                    f"change {cid!r}: range unit must be byte|char|line", details=details
                )
            if r.start < 0 or r.end < r.start:
                raise InvalidInputError(
                    f"change {cid!r}: range must satisfy 0 <= start <= end", details=details
                )


def plan_fingerprint(changes: Sequence[Change], token_digests: dict[str, str] | None = None) -> str:
    """Canonical hash of the plan's meaning (IDEM-1), independent of JSON key order.

    Tokens enter by the digest of what they declare (``token_digests`` maps a
    change id to it), so two tokens observed from identical inputs give the same
    fingerprint while different inputs give a different one.
    """
    doc: list[dict[str, Any]] = []
    for change in changes:
        item = change.to_json()
        if token_digests and change.id in token_digests:
            item["input"] = token_digests[change.id]
        elif change.input:
            item["input"] = hashlib.sha256(change.input.encode()).hexdigest()
        doc.append(item)
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()
