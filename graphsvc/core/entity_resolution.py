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

A query's short forms resolve the same way (:func:`resolve_query`): a query key that
is a form some current mention uses (an alias, or its hyphen variant) names that
form's entity; a capitalised one-word query name ("Vasquez", "SRE") that no mention
uses names the one full form of the subject it fits, and nothing when none or
several fit, exactly as a text's short form would resolve. The sources of the
retrieval graph (the head mirror, ``search/query_entities``) hand it every entity a
query key could name (:func:`probe_words`), so both answer alike.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "JOINERS",
    "RESOLUTION_VERSION",
    "EntityForms",
    "confirm_tentative",
    "probe_words",
    "resolve_forms",
    "resolve_query",
    "variant",
]

# Bump when a rule changes which forms join: the database records it with the
# extractor's version (ENT-6).
RESOLUTION_VERSION: Final = "resolve-2"

_NAME_TYPES: Final = frozenset({"person", "name"})
# Function words an acronym may skip ("GoT" of "Game of Thrones"); the store's
# search/query_entities skips the same ones.
JOINERS: Final = frozenset({"of", "de", "van", "von", "la", "and", "for", "the"})


def variant(form: str) -> str:
    """A form with hyphens as spaces and runs of space collapsed (its variant group)."""
    return " ".join(form.replace("-", " ").split())


def _initials(words: list[str]) -> set[str]:
    every = "".join(w[0] for w in words if w)
    content = "".join(w[0] for w in words if w and w not in JOINERS)
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
        groups.setdefault(variant(form), []).append(form)
    canonical = {v: min(members) for v, members in groups.items()}
    types: dict[str, set[str]] = {}
    for v, members in groups.items():
        types[v] = {t for m in members for t in forms[m]}
    full = sorted(v for v in groups if " " in v)
    target: dict[str, str] = {}
    for v in groups:
        key = canonical[v]
        if " " not in v:
            fitting = [f for f in full if _fits(v, types[v], f, types[f])]
            if len(fitting) == 1:
                key = canonical[fitting[0]]
        for member in groups[v]:
            target[member] = key
    return target


def confirm_tentative(
    forms: Mapping[str, Collection[str]], tentative: Collection[str]
) -> dict[str, str]:
    """The tentative forms (a sentence's opening words, ENT-6) that the subject's other
    forms make a name, each → the key of the entity it joins.

    A tentative form counts when it is, up to hyphens, a form of a name of two or more
    words some mention of the subject gives ("Ingrid Vasquez", or "Vasquez" once it
    joined "Ingrid Vasquez"), or one word that is the first or last word of exactly one
    full name of the subject (a first name, a surname); it joins that name's entity.
    A one-word entity of its own does not confirm it: chat capitalises common words
    ("Nature", "Family") often enough that they became entities, and on LoCoMo
    confirming those cost recall. Nothing else counts: "Great" and "Everything" stay
    out.

    Args:
        forms: every (not tentative) form of the subject and the types it is given.
        tentative: the tentative forms of the subject's current heads.

    Returns:
        tentative form → entity key, for those that count.
    """
    target = resolve_forms(forms)
    entity = {variant(f): target[f] for f in sorted(forms)}
    types: dict[str, set[str]] = {}
    for form, kinds in forms.items():
        types.setdefault(variant(form), set()).update(kinds)
    full = sorted(v for v in types if " " in v)
    out: dict[str, str] = {}
    for form in sorted(tentative):
        v = variant(form)
        if v in entity:
            if " " in v or " " in variant(entity[v]):
                out[form] = entity[v]
        elif " " not in v:
            fitting = [f for f in full if _names_part(v, f, types[f])]
            if len(fitting) == 1:
                out[form] = entity[fitting[0]]
    return out


def _names_part(word: str, full: str, full_types: Collection[str]) -> bool:
    words = full.split()
    return bool(_NAME_TYPES & set(full_types)) and word in (words[0], words[-1])


@dataclass(frozen=True)
class EntityForms:
    """One entity of a subject as query resolution sees it: its key, the forms its
    current mentions use and the types they give."""

    key: str
    forms: frozenset[str]
    types: frozenset[str]


def probe_words(key: str) -> set[str]:
    """The query words that may name the entity ``key``: its variant, and for a full
    form its first and last words and its initials (every word's, content words')."""
    v = variant(key)
    words = v.split()
    if len(words) < 2:
        return {v}
    return {v, words[0], words[-1], *_initials(words)}


def resolve_query(
    keys: Sequence[str], names: Collection[str], entities: Iterable[EntityForms]
) -> list[str]:
    """The keys of the entities a query names (ENT-4 with ENT-6; see the module's notes).

    Args:
        keys: the query's keys (:func:`graphsvc.core.entity_keys.query_keys`), in order.
        names: those of its one-word keys the query writes capitalised
            (:func:`graphsvc.core.entity_rules.query_names`): short forms of a name.
        entities: at least every entity of the subject whose :func:`probe_words`
            hold a query key's variant.

    Returns:
        Entity keys, each once, in the order of the first query key naming it.
    """
    owners: dict[str, set[str]] = {}
    full: list[EntityForms] = []
    for entity in entities:
        for form in {entity.key, *entity.forms}:
            owners.setdefault(variant(form), set()).add(entity.key)
        if " " in variant(entity.key):
            full.append(entity)
    named: dict[str, None] = {}
    for key in keys:
        v = variant(key)
        if v in owners:
            named.update(dict.fromkeys(sorted(owners[v])))
        elif key in names and " " not in v:
            fitting = {
                variant(e.key) for e in full if _fits(v, _NAME_TYPES, variant(e.key), e.types)
            }
            if len(fitting) == 1:
                (one,) = fitting
                named.update(dict.fromkeys(sorted(e.key for e in full if variant(e.key) == one)))
    return list(named)
