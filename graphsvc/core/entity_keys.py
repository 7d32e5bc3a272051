"""Entity mentions and their normalised keys (SPEC §16, ENT-1): pure, no I/O.

An extractor (:mod:`graphsvc.entities`) finds *surface forms* in a head's text
("the payments-api", "Caroline's", "8 May, 2023"); :func:`entity_key` turns each
into the key that identifies one entity within a subject, so that case,
punctuation, a leading "the" and a possessive do not split an entity in two, and
:func:`merge_mentions` folds one text's mentions into one per key (the surface
forms kept as aliases, the count of mentions kept for the spread's weights).

Query-named entities (ENT-4): :func:`query_keys` lists the keys a query text
could name, so a search can seed the entities a query mentions by an exact key
look-up, whatever the query's capitalisation.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "ENTITY_TYPES",
    "EntityFacts",
    "Mention",
    "entity_key",
    "fold_entity",
    "merge_mentions",
    "query_keys",
]

# The closed set of types (the explorer's colours, the GraphQL enum's values).
ENTITY_TYPES: Final = (
    "person",
    "organisation",
    "place",
    "product",
    "event",
    "date",
    "identifier",
    "name",
)

_LEADING: Final = ("the ", "a ", "an ")
_POSSESSIVE: Final = re.compile(r"(?:'s|’s|'|’)$")
_SPACE: Final = re.compile(r"\s+")
# Punctuation that carries no identity: "payments-api" and "payments api" stay
# apart (a hyphen is part of an identifier), "Dr. Smith" and "Dr Smith" do not.
_DROP: Final = re.compile(r"[\"“”‘’'`.,;:!?()\[\]{}<>]")
_WORD: Final = re.compile(r"[\w][\w\-./]*", re.UNICODE)
_MAX_KEY: Final = 200


@dataclass(frozen=True)
class Mention:
    """One entity a text names: its key, the surface forms used, a type, a count."""

    key: str
    name: str
    type: str
    count: int = 1
    aliases: tuple[str, ...] = field(default=())
    # A name the text alone cannot tell (a sentence's opening word): it counts only
    # while the subject's other texts make it one (ENT-6).
    tentative: bool = False

    def to_row(self) -> dict[str, object]:
        """The query parameter shape (``entities/replace_mentions``)."""
        return {
            "key": self.key,
            "name": self.name,
            "type": self.type,
            "count": self.count,
            "aliases": list(self.aliases or (self.name,)),
        }


def entity_key(surface: str) -> str:
    """The normalised key of a surface form ("" when nothing of it remains).

    NFKC, lower case, a leading article and a trailing possessive dropped,
    identity-free punctuation removed, runs of space collapsed.
    """
    text = unicodedata.normalize("NFKC", surface).strip().lower()
    text = _POSSESSIVE.sub("", text)
    for lead in _LEADING:
        if text.startswith(lead):
            text = text[len(lead) :]
            break
    text = _DROP.sub(" ", text)
    text = _SPACE.sub(" ", text).strip(" -/")
    return text[:_MAX_KEY]


def merge_mentions(
    found: Iterable[tuple[str, str]], *, key_of: dict[str, str] | None = None
) -> list[Mention]:
    """Fold ``(surface, type)`` pairs of one text into one :class:`Mention` per key.

    The display name is the most frequent surface form (ties: the longest, then
    the first seen); the type the most frequent one (ties: the first seen);
    ``key_of`` may give a key for a surface (dates normalised to ISO form).
    Deterministic: the same pairs give the same mentions, ordered by key.
    """
    by_key: dict[str, list[tuple[str, str]]] = {}
    for surface, kind in found:
        key = (key_of or {}).get(surface) or entity_key(surface)
        if key:
            by_key.setdefault(key, []).append((surface.strip(), kind))
    out: list[Mention] = []
    for key in sorted(by_key):
        pairs = by_key[key]
        surfaces = [s for s, _ in pairs]
        shown = [_POSSESSIVE.sub("", s) or s for s in surfaces]  # "Smith's" shows "Smith"
        name = max(shown, key=lambda s: (shown.count(s), len(s), -shown.index(s)))
        kinds = [k for _, k in pairs]
        kind = max(kinds, key=lambda k: (kinds.count(k), -kinds.index(k)))
        aliases = tuple(sorted(set(surfaces)))
        out.append(Mention(key, name, kind, len(pairs), aliases))
    return out


def query_keys(text: str, *, max_words: int = 4, limit: int = 256) -> list[str]:
    """Every key a query could name: the keys of its word n-grams (1..``max_words``).

    A look-up of these keys finds the entities a query names exactly (after the
    same normalisation), whatever its capitalisation; n-grams that normalise to
    nothing are dropped. At most ``limit`` keys, shortest n-grams first.
    """
    words: Sequence[str] = _WORD.findall(unicodedata.normalize("NFKC", text))
    keys: dict[str, None] = {}
    for n in range(1, max_words + 1):
        for i in range(len(words) - n + 1):
            key = entity_key(" ".join(words[i : i + n]))
            if key and len(key) > 1:
                keys.setdefault(key, None)
                if len(keys) >= limit:
                    return list(keys)
    return list(keys)


@dataclass(frozen=True)
class EntityFacts:
    """What an entity shows, derived from its current mentions only (ENT-3)."""

    key: str
    name: str
    type: str
    aliases: tuple[str, ...]
    mentions: int


def fold_entity(key: str, mentions: Sequence[Sequence[Any]]) -> EntityFacts:
    """An entity's name, type and aliases from its mentions ``(name, type, count,
    aliases[, form])``.

    The name and the type are the ones its mentions use most (weighted by count;
    ties: the longer, then the smaller name); when some mentions' own form is the
    entity's key (ENT-6: the full form of a joined entity), only they name it.
    Aliases are every surface form of every mention. Nothing of a removed mention
    survives the next fold.
    """
    names: dict[str, int] = {}
    own: dict[str, int] = {}
    kinds: dict[str, int] = {}
    aliases: set[str] = set()
    for name, kind, count, forms, *form in mentions:
        names[name] = names.get(name, 0) + int(count)
        if not form or form[0] == key:
            own[name] = own.get(name, 0) + int(count)
        kinds[kind] = kinds.get(kind, 0) + int(count)
        aliases.update(forms)
        aliases.add(name)
    names = own or names
    if not names:
        return EntityFacts(key, "", "", (), 0)
    name = min(names, key=lambda n: (-names[n], -len(n), n))
    kind = min(kinds, key=lambda k: (-kinds[k], k))
    return EntityFacts(key, name, kind, tuple(sorted(aliases)), len(mentions))
