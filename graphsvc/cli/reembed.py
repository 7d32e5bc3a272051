"""``graphsvc reembed [--model M]``: move a database's embeddings to another model."""

from __future__ import annotations

import argparse
from typing import Any

from graphsvc.cli.common import int_in
from graphsvc.cli.exit_codes import EXIT_INFORMATIONAL, EXIT_OK
from graphsvc.cli.output import command, emit, progress
from graphsvc.settings import Settings

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "reembed",
        help="embed every current body again with another model (stop graphsvc serve "
        "first; an interrupted run resumes), then rebuild the vector index with its "
        "dimension",
    )
    p.add_argument(
        "--model",
        default=None,
        help="all-MiniLM-L6-v2 or all-mpnet-base-v2 (default: GRAPHSVC_EMBEDDING_MODEL); "
        "serve with GRAPHSVC_EMBEDDING_MODEL set to it afterwards",
    )
    p.add_argument(
        "--batch", type=int_in(1, 10_000), default=256, help="heads per transaction (256)"
    )
    p.add_argument(
        "--timeout", type=float, default=3600.0, help="seconds to wait for the index (3600)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(handler=_reembed)


@command
def _reembed(args: argparse.Namespace, settings: Settings) -> int:
    from graphsvc.admin import check_durations
    from graphsvc.cli.common import connected_admin
    from graphsvc.embed.models import model_spec
    from graphsvc.embed.sentence import get_embedder

    spec = model_spec(args.model or settings.embedding.model)  # before Neo4j starts
    check_durations(0.0, args.timeout)
    embedder = get_embedder(spec.key)
    with connected_admin(settings) as admin:
        report = admin.reembed(
            embedder, batch=args.batch, timeout_s=args.timeout, progress=progress
        )
    if not report.reembedded and report.index is None:
        emit(args, report.to_json(), f"the embeddings already come from {report.model}")
        return EXIT_INFORMATIONAL
    emit(
        args,
        report.to_json(),
        f"{report.reembedded} heads re-embedded with {report.model} "
        f"(from {report.source}) in {report.seconds:.1f} s; serve with "
        f"GRAPHSVC_EMBEDDING_MODEL={spec.key}",
    )
    return EXIT_OK
