"""The rows of an import file: reading, resolving local targets, the first pass.

Part of ``graphsvc import`` (:mod:`graphsvc.bulk.bulk_import`): each non-blank line is
parsed by the same edge parser as ``write`` and every batch validated by the same
``validate_plan``; errors name the row (1-based line number) and the batch.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphsvc.core.binding import Binding
from graphsvc.core.import_report import MAX_BATCH
from graphsvc.core.input_bounds import first_wide_int
from graphsvc.core.write_models import AtomRef, Change, LinkSpec
from graphsvc.core.write_plan import Limits, validate_plan
from graphsvc.errors import GraphsvcError, InvalidInputError
from graphsvc.inputs.models import parse_changes
from graphsvc.ops.write import limits_from_settings

if TYPE_CHECKING:
    from graphsvc.settings import Settings

__all__ = [
    "MAX_BATCH",
    "ImportFile",
    "import_limits",
    "located",
    "read_batches",
    "resolve",
    "scan",
    "validated",
]

_COMPACT = {"id", "text", "links", "sources", "input"}


@dataclass(frozen=True)
class ImportFile:
    """What the first pass learnt: the file's identity and shape."""

    path: Path
    digest: str
    rows: int
    batches: int
    batch_size: int

    def key(self, index: int) -> str:
        """The idempotency key of batch ``index``."""
        return f"import:{self.digest}:{self.batch_size}:{index}"


def import_limits(settings: Settings, batch_size: int) -> Limits:
    """The write limits with ``batch_size`` changes per batch and bytes scaled with it.

    Raises:
        InvalidInputError: ``batch_size`` is outside 1..MAX_BATCH.
    """
    if not 1 <= batch_size <= MAX_BATCH:
        raise InvalidInputError(f"--batch must be 1..{MAX_BATCH}, not {batch_size}")
    base = limits_from_settings(settings)
    scale = max(1, math.ceil(batch_size / base.max_changes))
    return dataclasses.replace(
        base, max_changes=batch_size, max_write_bytes=base.max_write_bytes * scale
    )


@dataclass(frozen=True)
class _Row:
    line: int
    raw: Any


def _rows(path: Path, hasher: Any | None = None) -> Iterator[_Row]:
    """Each non-blank line's JSON with its 1-based line number.

    Raises:
        InvalidInputError: the file cannot be read, a line is not JSON, or it holds an
            integer outside the signed 64-bit range.
    """
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc}") from exc
    with fh:
        for number, line in enumerate(fh, start=1):
            if hasher is not None:
                hasher.update(line)
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except ValueError as exc:
                raise InvalidInputError(
                    f"row {number}: not JSON: {exc}", details={"row": number}
                ) from exc
            wide = first_wide_int(raw)
            if wide is not None:
                # Neo4j stores signed 64-bit integers; the driver would fail mid-batch.
                raise InvalidInputError(
                    f"row {number}: {wide} is outside the 64-bit integer range",
                    details={"row": number, "path": wide},
                )
            yield _Row(number, raw)


def read_batches(path: Path, size: int, hasher: Any | None = None) -> Iterator[list[_Row]]:
    batch: list[_Row] = []
    for row in _rows(path, hasher):
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _change(row: _Row) -> Change:
    """The row as a core Change, through the same edge parser as ``write``.

    Raises:
        InvalidInputError: the row does not have the shape of a change.
    """
    raw = row.raw
    if not isinstance(raw, dict):
        raise InvalidInputError(
            f"row {row.line}: a row is a JSON object", details={"row": row.line}
        )
    if "op" not in raw and "content" not in raw:
        extra = sorted(set(raw) - _COMPACT)
        if extra:
            raise InvalidInputError(
                f"row {row.line}: unknown field(s) {', '.join(extra)} of a compact row",
                details={"row": row.line},
            )
        compact = raw
        raw = {"id": compact.get("id"), "op": "create"}
        content: dict[str, Any] = {}
        if "text" in compact:
            content["text"] = compact["text"]
        if "links" in compact:
            content["links"] = compact["links"]
        if content:
            raw["content"] = content
        for key in ("sources", "input"):
            if key in compact:
                raw[key] = compact[key]
    try:
        return parse_changes([raw])[0]
    except InvalidInputError as exc:
        raise _at_row(exc, row.line) from exc


def _at_row(exc: GraphsvcError, line: int, batch: int | None = None) -> GraphsvcError:
    """The same error (same type and code), its message and details naming the row."""
    message = f"row {line}: {exc.message}"
    details = {**exc.details, "row": line}
    if batch is not None:
        details["batch"] = batch
    out = type(exc)(message, details=details)
    return out


def resolve(
    rows: list[_Row],
    index: int,
    earlier: dict[str, AtomRef | None],
) -> tuple[tuple[Change, ...], dict[str, int]]:
    """The batch's changes with links to earlier rows rewritten as refs.

    ``earlier`` maps the local id of every earlier row to its issued ref (None in
    the first pass, where a placeholder ref stands in: only shapes are checked).

    Raises:
        InvalidInputError: a row is malformed, an id repeats an earlier row's, or a
            local target names no earlier row and no row of this batch.
    """
    changes = [_change(row) for row in rows]
    line_of: dict[str, int] = {}
    for row, change in zip(rows, changes, strict=True):
        if change.id in earlier:
            raise InvalidInputError(
                f"row {row.line}: id {change.id!r} was used by an earlier row "
                "(local ids are unique in an import file)",
                details={"row": row.line, "batch": index, "changeId": change.id},
            )
        if change.id in line_of:
            raise InvalidInputError(
                f"row {row.line}: change id {change.id!r} appears twice (WR-1)",
                details={"row": row.line, "batch": index, "changeId": change.id},
            )
        line_of[change.id] = row.line
    out: list[Change] = []
    for row, change in zip(rows, changes, strict=True):
        if not change.links or all(
            link.local is None or link.local in line_of for link in change.links
        ):
            out.append(change)
            continue
        links: list[LinkSpec] = []
        for link in change.links:
            if link.local is None or link.local in line_of:
                links.append(link)
                continue
            if link.local not in earlier:
                raise InvalidInputError(
                    f"row {row.line}: local target {link.local!r} names no earlier row and "
                    "no row of this batch (an import resolves local targets to its own batch "
                    "or to earlier rows)",
                    details={"row": row.line, "batch": index, "changeId": change.id},
                )
            ref = earlier[link.local] or AtomRef("earlier-row", 1)
            links.append(dataclasses.replace(link, ref=ref, local=None))
        out.append(dataclasses.replace(change, links=tuple(links)))
    return tuple(out), line_of


def validated(
    changes: tuple[Change, ...],
    line_of: dict[str, int],
    index: int,
    binding: Binding,
    limits: Limits,
) -> tuple[Change, ...]:
    try:
        return validate_plan(changes, binding, limits).changes
    except GraphsvcError as exc:
        raise located(exc, line_of, index) from exc


def located(exc: GraphsvcError, line_of: dict[str, int], index: int) -> GraphsvcError:
    """``exc`` naming the row of its change (or the batch's first row)."""
    cid = exc.details.get("changeId")
    if isinstance(cid, str) and cid in line_of:
        return _at_row(exc, line_of[cid], index)
    first = min(line_of.values()) if line_of else 0
    last = max(line_of.values()) if line_of else 0
    message = f"batch {index} (rows {first}-{last}): {exc.message}"
    return type(exc)(message, details={**exc.details, "batch": index, "row": first})


def scan(path: Path, binding: Binding, limits: Limits) -> ImportFile:
    """First pass: digest, row count and the pure validation of every batch.

    Raises:
        InvalidInputError, BudgetExceededError, TokenInvalidError: a row (named in
            the message and ``details.row``) fails what ``write`` would refuse
            without the database.
    """
    hasher = hashlib.sha256()
    earlier: dict[str, AtomRef | None] = {}
    rows = 0
    batches = 0
    for index, batch in enumerate(read_batches(path, limits.max_changes, hasher)):
        changes, line_of = resolve(batch, index, earlier)
        validated(changes, line_of, index, binding, limits)
        for cid in line_of:
            earlier[cid] = None
        rows += len(batch)
        batches += 1
    if rows == 0:
        raise InvalidInputError(f"{path} has no rows (WR-1)")
    return ImportFile(
        path=path,
        digest="sha256:" + hasher.hexdigest(),
        rows=rows,
        batches=batches,
        batch_size=limits.max_changes,
    )
