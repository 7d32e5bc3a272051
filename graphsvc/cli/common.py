"""What every command shares: binding flags, a connected Service, a connected Admin."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import fields
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from graphsvc.cli.output import progress, terminal_safe
from graphsvc.core.binding import ACTOR_KINDS, Binding
from graphsvc.core.instants import as_of_instant
from graphsvc.errors import InvalidInputError
from graphsvc.settings import Settings

if TYPE_CHECKING:  # imported when a command connects: `--help` and the HTTP path skip them
    from graphsvc.admin import Admin
    from graphsvc.service import Service

__all__ = [
    "add_binding_args",
    "binding_from_args",
    "connected_admin",
    "connected_service",
    "empty_subject_warnings",
    "instant",
    "int_in",
    "no_atoms_warning",
    "request_from_args",
    "warn",
]

_Request = TypeVar("_Request")


def add_binding_args(p: argparse.ArgumentParser, *, default_kind: str = "human") -> None:
    """``--subject`` (required), ``--policy``, ``--actor-kind``, ``--actor-id``, ``--json``."""
    p.add_argument("--subject", required=True, help="the subject (tenant) to act in")
    p.add_argument("--policy", default="default")
    p.add_argument("--actor-kind", choices=list(ACTOR_KINDS), default=default_kind)
    p.add_argument("--actor-id", default="cli")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def binding_from_args(args: argparse.Namespace, *, may_purge: bool = False) -> Binding:
    """The CLI acts as a local operator: the binding comes from the flags."""
    return Binding(
        subject=args.subject,
        policy=args.policy,
        actor_kind=args.actor_kind,
        actor_id=args.actor_id,
        may_purge=may_purge,
    )


def request_from_args(
    request: Callable[..., _Request], args: argparse.Namespace, **given: Any
) -> _Request:
    """An operation's request (:mod:`graphsvc.core.requests`) from the parsed flags:
    each field from the flag of its name (``--include-archived`` is
    ``include_archived``), the fields no flag names from ``given`` or their defaults."""
    names = {f.name for f in fields(request)}  # type: ignore[arg-type]
    flags = {k: v for k, v in vars(args).items() if k in names and k not in given}
    return request(**flags, **given)


@contextmanager
def connected_service(settings: Settings) -> Iterator[Service]:
    """A Service on the configured (or managed) Neo4j, closed afterwards.

    Built by the composition root: the embedding model loads only when the command
    embeds something.
    """
    from graphsvc.runtime import build_service

    service, runtime = build_service(settings, progress=progress)
    try:
        yield service
    finally:
        runtime.close()


@contextmanager
def connected_admin(settings: Settings) -> Iterator[Admin]:
    """The operator's facade on the configured (or managed) Neo4j, closed afterwards.

    No schema step and no models: an index rebuild must not wait for a population
    an earlier attempt left running, and a re-embed brings its own model.
    """
    from graphsvc.admin import Admin
    from graphsvc.runtime import connect

    runtime = connect(settings, progress=progress)
    try:
        yield Admin(settings, runtime.db)
    finally:
        runtime.db.close()


def empty_subject_warnings(service: Service, subject: str) -> list[str]:
    """A warning when ``subject`` holds no atom at all (asked only when a search or
    read found nothing): "no hits" alone reads like a search that missed, when the
    usual cause is a misspelt ``--subject``."""
    if service.subject_has_atoms(subject):
        return []
    return [no_atoms_warning(subject)]


def no_atoms_warning(subject: str) -> str:
    """The warning of a search or read that found nothing in a subject without atoms."""
    return f"subject {subject!r} holds no atoms (check --subject)"


def warn(args: argparse.Namespace, payload: dict[str, object], warnings: list[str]) -> None:
    """Print each warning on stderr and, for ``--json``, add them as ``warnings``."""
    for line in warnings:
        print(terminal_safe(f"graphsvc: warning: {line}"), file=sys.stderr)
    if warnings and args.json:
        payload["warnings"] = warnings


def instant(raw: str) -> str:
    """An argparse ``type``: an ISO-8601 instant, in the stored form (UTC with
    microseconds, docs/time-travel.md); one without a time zone is UTC."""
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError as exc:
        raise argparse.ArgumentTypeError("must be an ISO-8601 date or time") from exc
    try:
        stored = as_of_instant(moment)
    except InvalidInputError as exc:
        raise argparse.ArgumentTypeError("must fall in years 1 to 9999 in UTC") from exc
    assert stored is not None
    return stored


def int_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type``: an integer in ``[low, high]`` (argparse's usage error else)."""

    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError as exc:
            raise argparse.ArgumentTypeError("must be an integer") from exc
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be in [{low}, {high}]")
        return value

    return parse
