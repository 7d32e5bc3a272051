"""Entity resolution within a subject (SPEC ENT-6): pure, deterministic, no I/O.

A text naming "Ingrid Vasquez" and a later one naming "Vasquez" name one person,
but their keys differ (:func:`~graphsvc.core.entity_keys.entity_key`), so the index
would hold two entities and activation could not join them. :func:`resolve_forms`
maps every *form* (a key some current mention uses) of one subject to the key of
the entity its mentions belong to:

1. **Hyphen and case variants**: forms equal once hyphens are spaces
   ("payments-api", "payments api"; case is already folded by the key) are one
   entity, keyed by the smallest of them.
2. **Short forms**: a one-word form joins the entity of a full form (two or more
   words) when exactly one full form of the subject fits it: as its first or last
   word (a first name, a surname; both forms of a name type, ``person`` or
   ``name``), or as its initials (an acronym: "SRE" of "Site Reliability
   Engineering", function words skipped or not).
3. A short form that fits no full form, or several ("Vasquez" once "Marco
   Vasquez" joins "Ingrid Vasquez"), is an entity of its own: a new full form
   splits what an earlier resolution joined.

The result depends only on the set of forms and their types, never on the order
they were written in; the store applies it inside the subject's entity-index lock
(:mod:`graphsvc.store.entities`) whenever a mention comes or goes, so purge and
retirement (ENT-2, ENT-3) re-resolve from surviving text only. Its version is part
of the recorded extractor version (ENT-1).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Final

__all__ = ["RESOLUTION_VERSION", "resolve_forms"]

# Bump when a rule changes which forms join: the database records it with the
# extractor's version (ENT-6).
RESOLUTION_VERSION: Final = "resolve-1"

_NAME_TYPES: Final = frozenset({"person", "name"})
_JOINERS: Final = frozenset({"of", "de", "van", "von", "la", "and", "for", "the"})


def _variant(form: str) -> str:
    return " ".join(form.replace("-", " ").split())


def _initials(words: list[str]) -> set[str]:
    every = "".join(w[0] for w in words if w)
    content = "".join(w[0] for w in words if w and w not in _JOINERS)
    return {every, content}


def _fits(short: str, short_types: Collection[str], full: str, full_types: Collection[str]) -> bool:
    words = full.split()
    named = bool(_NAME_TYPES & set(short_types)) and bool(_NAME_TYPES & set(full_types))
    if named and short in (words[0], words[-1]):
        return True
    return len(short) >= 2 and short.isalpha() and short in _initials(words)


def resolve_forms(forms: Mapping[str, Collection[str]]) -> dict[str, str]:
    """Every form's entity key (see the module's notes).

    Args:
        forms: each form (a mention key) of one subject and the types its mentions give.

    Returns:
        form → the key of the entity its mentions belong to (itself when unresolved).
    """
    groups: dict[str, list[str]] = {}
    for form in forms:
        groups.setdefault(_variant(form), []).append(form)
    canonical = {variant: min(members) for variant, members in groups.items()}
    types: dict[str, set[str]] = {}
    for variant, members in groups.items():
        types[variant] = {t for m in members for t in forms[m]}
    full = sorted(v for v in groups if " " in v)
    target: dict[str, str] = {}
    for variant in groups:
        key = canonical[variant]
        if " " not in variant:
            fitting = [f for f in full if _fits(variant, types[variant], f, types[f])]
            if len(fitting) == 1:
                key = canonical[fitting[0]]
        for member in groups[variant]:
            target[member] = key
    return target
