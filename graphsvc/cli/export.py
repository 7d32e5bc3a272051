"""``graphsvc export``: a subject's graph for analysts as GraphML, node-link JSON or CSV.

The command is one call into :meth:`graphsvc.service.Service.export_graph` (the use
case :func:`graphsvc.ops.export.export_graph`: subject binding, purge-pending check,
streaming pages); it runs no query itself.
See ``docs/analysts.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from graphsvc.cli.common import add_binding_args, binding_from_args, connected_service, instant
from graphsvc.cli.output import command, emit
from graphsvc.core.views import EXPORT_FORMATS, ExportReport
from graphsvc.errors import InvalidInputError
from graphsvc.settings import Settings

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "export",
        help="export a subject's graph for analysts (GraphML, node-link JSON, CSV)",
        description="Stream a subject's graph: atoms at their heads, sources with CITES "
        "edges, links, signed lineage (signature checked), the entities their texts "
        "name with MENTIONS edges and, with --revisions, superseded revisions. See "
        "docs/analysts.md.",
    )
    add_binding_args(p)
    p.add_argument("--format", choices=list(EXPORT_FORMATS), default="graphml")
    p.add_argument(
        "-o",
        "--output",
        default="-",
        help="file to write, '-' for stdout (default); for csv a folder that gets "
        "nodes.csv and edges.csv",
    )
    p.add_argument("--revisions", action="store_true", help="also superseded revisions")
    p.add_argument("--page-size", type=int, default=500, help="atoms per read page")
    p.add_argument(
        "--as-of",
        type=instant,
        help="the graph as of this instant (ISO-8601; docs/time-travel.md): heads, states "
        "and logical targets as of then; entities are left out (they describe now)",
    )
    p.add_argument(
        "--since",
        type=instant,
        help="incremental: only atoms with a revision created at or after this instant "
        "(with --revisions, only those revisions)",
    )
    p.set_defaults(handler=_run)


def _progress(report: ExportReport) -> None:
    end = "\r" if sys.stderr.isatty() else "\n"
    print(
        f"export: page {report.pages}: {report.atoms} atoms, {report.edges} edges",
        end=end,
        file=sys.stderr,
        flush=True,
    )


@contextlib.contextmanager
def _file_atomically(path: Path) -> Any:
    """A text file that appears at ``path`` only when writing it succeeded."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@command
def _run(args: argparse.Namespace, settings: Settings) -> int:
    binding = binding_from_args(args)
    to_stdout = args.output == "-"
    if args.format == "csv" and to_stdout:
        raise InvalidInputError("csv writes nodes.csv and edges.csv: give a folder with -o")
    if to_stdout and args.json:
        raise InvalidInputError("--json prints a report on stdout: give a file with -o")
    with connected_service(settings) as service:

        def run(target: Any) -> ExportReport:
            return service.export_graph(
                binding,
                args.format,
                target,
                revisions=args.revisions,
                page_size=args.page_size,
                progress=_progress,
                as_of=args.as_of,
                since=args.since,
            )

        if args.format == "csv":
            report = run(Path(args.output))
        elif to_stdout:
            out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="")
            report = run(out)
            out.flush()
            out.detach()
        else:
            with _file_atomically(Path(args.output)) as fh:
                report = run(fh)
    payload = {**report.to_json(), "path": args.output}
    summary = (
        f"wrote {report.nodes} nodes and {report.edges} edges ({report.atoms} atoms, "
        f"{report.sources} sources, {report.lineage} lineage edges, {report.entities} "
        f"entities) to {args.output}"
    )
    if to_stdout:
        print(summary, file=sys.stderr)
    else:
        emit(args, payload, summary)
    return 0
