"""``graphsvc purge ATOM_ID --subject S [--json]`` (SPEC §6, API-4).

The CLI is a local operator: its binding has the purge right (actor kind
``human`` by default; ``--actor-kind agent`` is refused like any agent). Running
the command again for the same atom resumes an unfinished purge (LNK-6).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from graphsvc.clicmd.common import add_binding_args, binding_from_args, emit, progress
from graphsvc.embed.sentence import DIMENSION, MODEL_NAME, get_embedder
from graphsvc.service import Service
from graphsvc.settings import Settings

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add ``purge`` to the ``graphsvc`` sub-parser set."""
    p: argparse.ArgumentParser = sub.add_parser(
        "purge",
        help="erase an atom and everything that depends on it (operator)",
        description="Erase an atom, every revision of it and its dependency closure; "
        "run it again to resume an unfinished purge.",
    )
    p.add_argument("atom_id", metavar="ATOM_ID")
    add_binding_args(p)
    p.set_defaults(handler=_cmd_purge)


def _cmd_purge(args: argparse.Namespace, settings: Settings) -> int:
    binding = binding_from_args(args, may_purge=True)
    with _operator_service(settings) as service:
        outcome = service.purge(binding, args.atom_id)
    how = "resumed and finished" if outcome["resumed"] else "finished"
    emit(
        args,
        outcome,
        f"purge of {outcome['atomId']} {how}: {len(outcome['purged'])} atom(s), "
        f"{outcome['revisions']} revision(s), {outcome['inputs']} input record(s) erased; "
        "their bytes stay in Neo4j's files until `graphsvc compact` (docs/erasure.md)",
    )
    return 0


class _DeferredEmbedder:
    """Loads the embedding model only when something embeds; purge never does.

    Loading the model costs seconds of CPU per operator call, for nothing.
    """

    model_name = MODEL_NAME
    dimension = DIMENSION

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return get_embedder().embed(texts)


@contextmanager
def _operator_service(settings: Settings) -> Iterator[Service]:
    from graphsvc.runtime import connect
    from graphsvc.tokenizer import get_tokenizer

    rt = connect(settings, progress=progress)
    try:
        rt.db.apply_schema()
        yield Service(settings, rt.db, _DeferredEmbedder(), get_tokenizer())
    finally:
        rt.db.close()
