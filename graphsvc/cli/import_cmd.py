"""``graphsvc import FILE.jsonl --subject S [--batch N]``: bulk-load atoms (docs/ingest.md).

The file is read and validated completely before any connection is made, so a
malformed row fails fast (with its line number) without starting Neo4j. A progress
bar with the rate goes to stderr; the summary (human text, or one JSON document
with ``--json``) to stdout. A failure names its row; with ``--json`` it prints
``{"error", "message", "exitCode", "row", "batch", "rows"}`` (the CLI's one error
format, docs/cli.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from graphsvc.cli.common import add_binding_args, binding_from_args, connected_service
from graphsvc.cli.output import command, emit, terminal_safe
from graphsvc.core.import_report import MAX_BATCH, ImportProgress, ImportSummary
from graphsvc.errors import GraphsvcError
from graphsvc.settings import Settings

__all__ = ["ProgressBar", "register"]


def register(sub: Any) -> None:
    """Add ``import`` to the ``graphsvc`` sub-parser set."""
    p = sub.add_parser(
        "import", help="bulk-load a JSONL file of atoms (one transaction per batch, resumable)"
    )
    p.add_argument("file", help="JSONL: one change (or compact atom row) per line")
    add_binding_args(p)
    p.add_argument(
        "--batch",
        type=int,
        default=None,
        help=f"rows per batch/transaction (default GRAPHSVC_IMPORT_BATCH; at most {MAX_BATCH})",
    )
    p.set_defaults(handler=_run)


class ProgressBar:
    """``import: [####    ] 12,000/20,000 atoms  4,210 atoms/s  batch 6/10  eta 2s``.

    On a terminal the line is redrawn in place; elsewhere (logs, tests) one line is
    printed per update, at most every ``interval`` seconds, and always the last one.
    """

    def __init__(self, stream: TextIO = sys.stderr, interval: float = 0.5) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.interval = interval
        self._last: float | None = None

    def __call__(self, p: ImportProgress) -> None:
        final = p.rows_done >= p.rows
        now = time.monotonic()
        if not final and self._last is not None and now - self._last < self.interval:
            return
        self._last = now
        rate = p.rows_done / p.elapsed_s if p.elapsed_s > 0 else 0.0
        share = p.rows_done / p.rows if p.rows else 1.0
        filled = int(share * 20)
        eta = (p.rows - p.rows_done) / rate if rate > 0 else 0.0
        line = (
            f"import: [{'#' * filled}{' ' * (20 - filled)}] {p.rows_done:,}/{p.rows:,} atoms "
            f"{rate:,.0f} atoms/s  batch {p.batch}/{p.batches}  eta {eta:.0f}s"
        )
        if self.tty:
            self.stream.write("\r" + line + ("\n" if final else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


@command
def _run(args: argparse.Namespace, settings: Settings) -> int:
    """Scan the file, connect, import, print the summary.

    Raises:
        GraphsvcError: a malformed row before connecting; what the failing batch's
            ``write`` would raise after, with the file's row count as ``rows``
            (:func:`graphsvc.cli.output.command` prints it).
    """
    binding = binding_from_args(args)
    path = Path(args.file)
    batch = args.batch or settings.operations.import_batch
    # Everything checkable without the database fails before Neo4j is started.
    from graphsvc.service import Service  # the facade, only once a command runs

    scanned = Service.scan_import(settings, binding, path, batch)
    summary: ImportSummary | None = None
    with connected_service(settings) as service:
        try:
            summary = service.import_file(
                binding, path, batch_size=batch, scanned=scanned, progress=ProgressBar()
            )
        except GraphsvcError as exc:
            exc.details.setdefault("rows", scanned.rows)
            raise
    payload = summary.to_json()
    text = (
        f"imported {payload['committedRows']:,} atoms in {payload['committedBatches']} batches "
        f"({payload['atomsPerSecond']:,.0f} atoms/s); "
        f"{payload['replayedBatches']} batches already committed ({payload['replayedRows']:,} rows)"
    )
    for note in payload["notes"]:
        print(terminal_safe(f"graphsvc: note: {note}"), file=sys.stderr)
    emit(args, payload, text)
    return 0
