"""Governance hooks of an atomisation (ATM-2).

Hooks judge each atom ``(index, text)`` before anything commits; one raising
:class:`~graphsvc.errors.GovernanceRefusedError` refuses the whole atomisation, and
the refusal is re-raised naming the atom index and the hook. Deployments configure a
hook set with ``GRAPHSVC_ATOMISE_HOOKS=module:attribute`` (an :class:`AtomiseHooks`
or a callable returning one); callers may pass more, which run after it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from graphsvc.errors import GovernanceRefusedError, InvalidInputError

__all__ = ["AtomiseHooks", "Hook", "hook_chain", "load_configured_hooks", "run_hooks"]

Hook = Callable[[int, str], None]


@dataclass(frozen=True)
class AtomiseHooks:
    """Governance hooks run for every atom before commit (ATM-2).

    Each is called with ``(atom index, atom text)``; raising
    :class:`~graphsvc.errors.GovernanceRefusedError` refuses the whole atomisation
    and nothing is committed. ``pre_store`` runs for every atom before anything is
    written; the others run inside the transaction, per atom, in the order
    store → ``post_store`` → ``pre_link`` → lineage edge → ``post_link``.
    """

    pre_store: Hook | None = None
    post_store: Hook | None = None
    pre_link: Hook | None = None
    post_link: Hook | None = None


@cache
def load_configured_hooks(spec: str) -> AtomiseHooks:
    """Import the configured hook set (cached per spec).

    Raises:
        InvalidInputError: the spec is malformed or does not name an AtomiseHooks.
    """
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise InvalidInputError("GRAPHSVC_ATOMISE_HOOKS must be 'module:attribute'")
    try:
        found: Any = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise InvalidInputError(f"cannot load atomisation hooks {spec!r}: {exc}") from exc
    if not isinstance(found, AtomiseHooks) and callable(found):
        found = found()
    if not isinstance(found, AtomiseHooks):
        raise InvalidInputError(f"{spec!r} is not an AtomiseHooks object or factory")
    return found


def hook_chain(configured: str, hooks: AtomiseHooks | None) -> list[AtomiseHooks]:
    """The configured hook set (if any) followed by the caller's.

    Raises:
        InvalidInputError: the configured hooks cannot be loaded.
    """
    chain: list[AtomiseHooks] = []
    if configured:
        chain.append(load_configured_hooks(configured))
    if hooks is not None:
        chain.append(hooks)
    return chain


def run_hooks(chain: Sequence[AtomiseHooks], name: str, index: int, text: str) -> None:
    """Run hook ``name`` of every set for one atom.

    Raises:
        GovernanceRefusedError: a hook refused; ``details`` has ``atomIndex``, ``hook``.
    """
    for hooks in chain:
        hook: Hook | None = getattr(hooks, name)
        if hook is None:
            continue
        try:
            hook(index, text)
        except GovernanceRefusedError as exc:
            raise GovernanceRefusedError(
                f"atom {index} refused by the {name} hook: {exc.message}",
                details={**exc.details, "atomIndex": index, "hook": name},
            ) from exc
