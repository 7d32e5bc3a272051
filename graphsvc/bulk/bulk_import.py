"""Bulk import of a JSONL file of atoms (``graphsvc import``) through the write path.

Each non-blank line of the file is one change in the shape ``write`` takes (SPEC §2),
or the compact form ``{"id", "text", "links", "sources"[, "input"]}`` of a create.
Rows are cut into batches of ``batch_size``; every batch is one ``write`` plan: the
same pure validation (:func:`graphsvc.core.write_plan.validate_plan`), the same
token checks, the same request builder and the same single Neo4j transaction
(:func:`graphsvc.store.write_store.commit_write`, ``UNWIND`` over every row of the
batch). Only two things differ from a ``write`` call, both documented in
``docs/ingest.md``:

- A ``local`` link target may name a row of the same batch (as in ``write``, WR-5)
  or of an **earlier** row of the file: that target is already an issued revision,
  so the link is written as a ``ref`` to it. A local id is unique in the whole file.
- The batch limit is ``batch_size`` changes and ``max_write_bytes`` scales with it;
  per-atom limits (body bytes, links, sources) are the configured ones.

**Two passes.** The first pass reads the file once: its SHA-256 digest and the pure
validation of every batch, so a malformed row anywhere fails before anything is
written (with its line number). The second pass is a pipeline: a worker thread
parses, resolves and embeds batch *i+1* while the calling thread commits batch *i*.

**Resume.** Batch *i* is written under the idempotency key
``import:<digest>:<batch_size>:<i>`` (scoped to subject, policy and actor like any
key, IDEM-1). A rerun of the same file with the same batch size finds the committed
batches' results and replays them (their atom ids resolve later rows' local
targets) and commits the rest, so each row is stored exactly once.

Reading, resolving and the first pass are :mod:`graphsvc.bulk.import_rows`. This module
lives beside ``seed.py``, not in ``ops/``: it runs a worker thread (joined
before it returns), and the operations of the core stay free of threads (CORE-3).
"""

from __future__ import annotations

import contextlib
import gc
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from graphsvc.bulk.import_rows import (
    ImportFile,
    import_limits,
    located,
    read_batches,
    resolve,
    scan,
    validated,
)
from graphsvc.core.binding import Binding
from graphsvc.core.import_report import MAX_BATCH, ImportProgress, ImportSummary
from graphsvc.core.write_models import AtomRef
from graphsvc.core.write_plan import Limits
from graphsvc.errors import GraphsvcError, IdempotencyConflictError
from graphsvc.ops.write import (
    WriteDeps,
    build_request,
    check_live_tokens,
    check_replay,
    embed_into,
    extract_into,
    idempotency_scope,
    open_claims,
)
from graphsvc.settings import Settings
from graphsvc.store.connection import Database
from graphsvc.store.write_store import WriteRequest, commit_write, find_idempotency

# Test-only (install_batch_hook): called with the number of batches committed so far,
# right after each commit. Only a test's subprocess entry point installs one
# (tests/integration/import_crash_entry.py); production reads no fault switch.
_batch_hook: Callable[[int], None] | None = None


def install_batch_hook(hook: Callable[[int], None] | None) -> None:
    """Test-only: every import of this process calls ``hook(committed_batches)``
    after each batch commits (None removes it)."""
    global _batch_hook
    _batch_hook = hook


__all__ = [
    "MAX_BATCH",
    "ImportFile",
    "ImportHost",
    "ImportProgress",
    "ImportSummary",
    "import_file",
    "import_limits",
    "scan",
]


# ------------------------------------------------------------------ the pipeline
@dataclass
class _Prepared:
    index: int
    rows: int
    line_of: dict[str, int]
    request: WriteRequest
    embed_s: float


@dataclass
class _Replayed:
    index: int
    rows: int


@dataclass
class _Failed:
    error: BaseException


_Item = _Prepared | _Replayed | _Failed


class ImportHost(Protocol):
    """What :func:`import_file` uses of the facade: settings and the write's dependencies."""

    @property
    def settings(self) -> Settings: ...

    def write_deps(self) -> WriteDeps: ...


def _prepare(
    deps: WriteDeps,
    binding: Binding,
    file: ImportFile,
    limits: Limits,
    stop: threading.Event,
) -> Iterator[_Item]:
    """Second pass: each batch replayed (already committed) or built and embedded."""
    earlier: dict[str, AtomRef | None] = {}
    for index, batch in enumerate(read_batches(file.path, file.batch_size)):
        if stop.is_set():
            return
        changes, line_of = resolve(batch, index, earlier)
        changes = validated(changes, line_of, index, binding, limits)
        try:
            claims, fingerprint = open_claims(deps.secret, binding, changes)
            scope_key = idempotency_scope(binding, file.key(index))
            found = find_idempotency(deps.db, scope_key)
            if found is not None and found.state != "pending":
                refs = check_replay(found, binding, fingerprint)
                earlier.update(refs)
                yield _Replayed(index, len(batch))
                continue
            check_live_tokens(deps.db, deps.secret, binding, changes, claims, deps.clock())
            req, to_embed = build_request(
                deps.db,
                deps.tokenizer,
                binding,
                changes,
                claims,
                fingerprint,
                scope_key,
                deps.clock(),
            )
        except GraphsvcError as exc:
            raise located(exc, line_of, index) from exc
        started = time.perf_counter()
        embed_into(deps.embedder, req, to_embed)
        extract_into(deps.extractor, req)
        embed_s = time.perf_counter() - started
        earlier.update({cid: AtomRef(r["atomId"], r["rev"]) for cid, r in req.result.items()})
        yield _Prepared(index, len(batch), line_of, req, embed_s)


def import_file(
    service: ImportHost,
    binding: Binding,
    path: Path,
    *,
    batch_size: int | None = None,
    scanned: ImportFile | None = None,
    progress: Callable[[ImportProgress], None] | None = None,
) -> ImportSummary:
    """Import ``path`` into the binding's subject, one transaction per batch.

    Batches commit in file order; the first failing batch stops the import and
    nothing of it is written (earlier batches stay committed; a rerun resumes).

    Raises:
        GraphsvcError: the code ``write`` would give for the failing batch, the
            message and ``details`` naming the row (``row``: 1-based line number)
            and the batch (``batch``: 0-based index).
    """
    with _long_lived_objects_frozen():
        return _import(service, binding, path, batch_size, scanned, progress)


@contextlib.contextmanager
def _long_lived_objects_frozen() -> Iterator[None]:
    """Keep the cyclic garbage collector off the objects that exist when the import starts.

    An import allocates some containers per row (parsed rows, the transaction's
    parameter dicts, 384-float lists), so full collections run every few batches,
    and each walks every tracked object of the process: the model's, the caller's.
    ``gc.freeze`` moves those to a permanent generation for the import's duration;
    ``gc.unfreeze`` gives them back to the collector after it. That cuts the
    import's Python CPU per row (docs/performance.md#bulk-import).
    Only a process that froze nothing itself is touched (its own freeze is kept).
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _import(
    service: ImportHost,
    binding: Binding,
    path: Path,
    batch_size: int | None,
    scanned: ImportFile | None,
    progress: Callable[[ImportProgress], None] | None,
) -> ImportSummary:
    settings = service.settings
    deps = service.write_deps()
    size = batch_size or settings.operations.import_batch
    limits = import_limits(settings, size)
    file = scanned or scan(path, binding, limits)
    summary = ImportSummary(
        file=str(path),
        digest=file.digest,
        subject=binding.subject,
        rows=file.rows,
        batch_size=file.batch_size,
        batches=file.batches,
    )
    summary.notes.extend(_policy_notes(deps.db, binding))
    started = time.perf_counter()
    items: queue.Queue[_Item | None] = queue.Queue(maxsize=2)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in _prepare(deps, binding, file, limits, stop):
                _put(items, item, stop)
        except BaseException as exc:  # handed to the committing thread
            _put(items, _Failed(exc), stop)
        finally:
            _put(items, None, stop)

    worker = threading.Thread(target=produce, name="graphsvc-import-prepare", daemon=True)
    worker.start()
    done = 0
    try:
        while (item := items.get()) is not None:
            if isinstance(item, _Failed):
                raise item.error
            if isinstance(item, _Replayed):
                summary.replayed_batches += 1
                summary.replayed_rows += item.rows
            else:
                _commit(deps.db, item, summary)
                if _batch_hook is not None:
                    _batch_hook(summary.committed_batches)
            done += item.rows
            if progress is not None:
                progress(
                    ImportProgress(
                        done, file.rows, item.index + 1, file.batches, time.perf_counter() - started
                    )
                )
    finally:
        stop.set()
        worker.join(timeout=60)
    summary.seconds = time.perf_counter() - started
    return summary


def _put(items: queue.Queue[_Item | None], item: _Item | None, stop: threading.Event) -> None:
    """Hand ``item`` over unless the consumer has stopped (never blocks forever)."""
    while not stop.is_set():
        try:
            items.put(item, timeout=0.1)
            return
        except queue.Full:
            continue


def _commit(db: Database, item: _Prepared, summary: ImportSummary) -> None:
    req = item.request
    started = time.perf_counter()
    try:
        replay = commit_write(db, req)
    except GraphsvcError as exc:
        raise located(exc, item.line_of, item.index) from exc
    summary.commit_seconds += time.perf_counter() - started
    summary.embed_seconds += item.embed_s
    if replay is not None and replay.result != req.result:
        # Another run committed this batch between our check and our commit; the
        # next batch was resolved against our ids, so stop here (a rerun resumes).
        raise IdempotencyConflictError(
            f"batch {item.index} was committed by another import of this file meanwhile; "
            "run the import again to resume",
            details={"batch": item.index, "row": min(item.line_of.values())},
        )
    summary.committed_batches += 1
    summary.committed_rows += item.rows
    summary.links += len(req.links_observed) + len(req.links_logical)
    summary.citations += len(req.cites)


def _policy_notes(db: Database, binding: Binding) -> list[str]:
    """Import stores rows as given: a namespace atomisation policy is not applied."""
    from graphsvc.atomise.policy import get_namespace_policy

    mode = get_namespace_policy(db, binding).mode
    if mode is None:
        return []
    return [
        f"the namespace policy's atomisation ({mode}) is not applied by import; "
        "run `graphsvc atomise` on long atoms afterwards"
    ]
