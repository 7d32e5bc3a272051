"""The rule extractor of the entity index (SPEC §16): pure and deterministic.

Three families of rules, applied in this order (a span taken by one is not seen
again by the next):

1. **Dates** (type ``date``): ISO dates (``2026-02-20``), day-month-year and
   month-day-year in words (``8 May, 2023``, ``May 8th 2023``), month and year
   (``May 2023``) and years 1900–2099; the key is the ISO form (``2023-05-08``,
   ``2023-05``, ``2023``), so one day written three ways is one entity. Relative
   expressions ("yesterday", "last week") and bare weekdays or months are not
   entities: their meaning depends on when the text was written, and as keys they
   would tie together texts about unrelated days.
2. **Identifiers** (type ``identifier``): ticket-like ids (``INC-2041``,
   ``ADR-014``), ``snake_case`` names (``connections_in_use``), lower-case hyphenated
   names (``payments-api``) and inner-capital names (``PgBouncer``, ``camelCase``).
   A hyphenated word with a function word or number word as a part (``follow-up``,
   ``in-flight``, ``seven-day``) is ordinary English, not a name.
3. **Names** (capitalised spans): runs of capitalised words ("Melanie", "Game of
   Thrones", "PCI DSS"), joined by ``of``/``de``/``van``/``von``/``la``. A single
   capitalised word at the start of a sentence is a name only when the same word is
   also capitalised elsewhere in the text, or a possessive or "and" + a capitalised
   word follows it (else "Yesterday", "Wow" and every sentence's first word would be
   names). Such an opening the text alone cannot tell ("Ingrid went home.", and
   "Ingrid Vasquez" when a sentence opens with it) is a *tentative* mention: the
   store keeps it and counts it only while the subject's other texts make it a name
   (ENT-6, :func:`graphsvc.core.entity_resolution.confirm_tentative`). The type is
   ``person`` after a title (Mr, Dr, …), ``organisation`` or ``place`` when the span
   ends with a word that says so (Inc, University, Street, Lake, …), else ``name``
   (rules cannot tell a person from a band without a model; docs/entities.md has the
   measured trade-off).

The rules know English function words, number words, month names and a few
titles and head nouns, nothing of any corpus.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Final

from graphsvc.core.entity_keys import Mention, entity_key, merge_mentions

__all__ = ["RULES_VERSION", "extract_rules", "query_names"]

# Bump when a rule changes what is extracted: the database records it (ENT-1).
RULES_VERSION: Final = "rules-2"


def _words(text: str) -> list[str]:
    return text.split()


_MONTHS: Final = {
    m: i + 1
    for i, ms in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        )
    )
    for m in ms
}
_MONTH_RE: Final = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"
)
_ORD: Final = r"(?:st|nd|rd|th)?"
_DATE_PATTERNS: Final = (
    ("ymd", re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")),
    ("dmy", re.compile(rf"\b(\d{{1,2}}){_ORD}(?:\s+of)?\s+({_MONTH_RE}),?\s+(\d{{4}})\b")),
    ("mdy", re.compile(rf"\b({_MONTH_RE})\s+(\d{{1,2}}){_ORD},?\s+(\d{{4}})\b")),
    ("my", re.compile(rf"\b({_MONTH_RE}),?\s+(\d{{4}})\b")),
    ("y", re.compile(r"(?<![\d\-./:])\b((?:19|20)\d{2})\b(?![\d\-./:])")),
)
_TICKET: Final = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d+\b")
_SNAKE: Final = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_HYPHENATED: Final = re.compile(r"(?<![\w-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w-])")
_INNER_CAP: Final = re.compile(r"\b(?:[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z]+[A-Z][A-Za-z0-9]*)\b")
_WORD: Final = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ][\w'’&-]*|\S")
_AND_NAME: Final = re.compile(r"\s+(?:and|&)\s+[A-Z]")
_SENTENCE_ENDS: Final = frozenset(".!?:;")
_OPENING: Final = frozenset("\"“‘('[")
_CONNECTORS: Final = frozenset({"of", "de", "van", "von", "la", "del", "da", "du"})

_FUNCTION_WORDS: Final = frozenset(
    _words(
        """a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his how
    i if in into is it its itself just me more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves yes yeah oh ok okay wow hey hi hello thanks
    thank please sure well also still even ever never always maybe let lets i'm i've
    i'd i'll it's that's what's there's here's don't didn't can't won't isn't wasn't
    aren't weren't you're you've we're they're he's she's"""
    )
)
_NUMBER_WORDS: Final = frozenset(
    _words(
        """one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy
    eighty ninety hundred thousand million first second third half single double
    multi non self re co pre post anti semi"""
    )
)
_NOT_NAMES: Final = frozenset(
    set(_MONTHS)
    | {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
    | {"today", "tomorrow", "yesterday", "tonight"}
)
_TITLES: Final = frozenset(_words("mr mrs ms miss dr prof sir dame aunt uncle"))
_ORG_HEADS: Final = frozenset(
    _words(
        """inc ltd llc corp corporation company co university college school academy bank
    group foundation association club institute society council ministry agency
    department team squad band church hospital"""
    )
)
_PLACE_HEADS: Final = frozenset(
    _words(
        """street st road rd avenue ave city town village park lake river mountain mountains
    beach island islands county state province bay valley forest ocean sea"""
    )
)


def extract_rules(text: str, *, tentative: bool = False) -> list[Mention]:
    """The entities ``text`` names by the rules above, one :class:`Mention` per key;
    with ``tentative``, the sentence openings the text cannot tell as names follow
    (flagged ``tentative``, keys the others do not have)."""
    taken = [False] * len(text)
    found: list[tuple[str, str]] = []
    unsure: list[tuple[str, str]] = []
    keys: dict[str, str] = {}
    for surface, iso in _dates(text, taken):
        found.append((surface, "date"))
        keys[surface] = iso
    for surface in _identifiers(text, taken):
        found.append((surface, "identifier"))
    for surface, kind, sure in _names(text, taken):
        (found if sure else unsure).append((surface, kind))
    mentions = merge_mentions(found, key_of=keys)
    if not tentative:
        return mentions
    known = {m.key for m in mentions}
    return mentions + [
        replace(m, tentative=True) for m in merge_mentions(unsure) if m.key not in known
    ]


def query_names(text: str) -> frozenset[str]:
    """The keys of the words a query writes capitalised ("Vasquez", "SRE"), function
    words, months, weekdays and relative days left out: the short forms of a name that
    a query may name (ENT-6, :func:`graphsvc.core.entity_resolution.resolve_query`).
    A query's first word counts too: a question's opening word is nearly always a
    function word ("What", "When"), and the short form must still fit exactly one
    full form of the subject to name anything."""
    found = set()
    for m in _WORD.finditer(text):
        word = m.group(0).rstrip("'’")
        if len(word) > 1 and _capitalised(word) and word.lower() not in _NOT_NAMES:
            key = entity_key(word)
            if key and " " not in key:
                found.add(key)
    return frozenset(found)


def _free(taken: list[bool], start: int, end: int) -> bool:
    return not any(taken[start:end])


def _take(taken: list[bool], start: int, end: int) -> None:
    for i in range(start, end):
        taken[i] = True


def _month(word: str) -> int:
    return _MONTHS[word.rstrip(".").lower()]


def _dates(text: str, taken: list[bool]) -> Iterator[tuple[str, str]]:
    for kind, pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            if not _free(taken, m.start(), m.end()):
                continue
            iso = _iso(kind, m.groups())
            if iso is None:
                continue
            _take(taken, m.start(), m.end())
            yield m.group(0), iso


def _iso(kind: str, g: tuple[str | None, ...]) -> str | None:
    parts = [x or "" for x in g]
    if kind == "ymd":
        year, month, day = int(parts[0]), int(parts[1]), int(parts[2])
    elif kind == "dmy":
        day, month, year = int(parts[0]), _month(parts[1]), int(parts[2])
    elif kind == "mdy":
        month, day, year = _month(parts[0]), int(parts[1]), int(parts[2])
    elif kind == "my":
        return f"{int(parts[1]):04d}-{_month(parts[0]):02d}"
    else:
        return parts[0]
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return f"{year:04d}-{month:02d}-{day:02d}"


def _identifiers(text: str, taken: list[bool]) -> Iterator[str]:
    for pattern in (_TICKET, _SNAKE, _INNER_CAP):
        for m in pattern.finditer(text):
            if _free(taken, m.start(), m.end()):
                _take(taken, m.start(), m.end())
                yield m.group(0)
    for m in _HYPHENATED.finditer(text):
        parts = m.group(0).split("-")
        if any(p in _FUNCTION_WORDS or p in _NUMBER_WORDS or p.isdigit() for p in parts):
            continue
        if _free(taken, m.start(), m.end()):
            _take(taken, m.start(), m.end())
            yield m.group(0)


def _capitalised(word: str) -> bool:
    return word[:1].isupper() and word.lower() not in _FUNCTION_WORDS


def _names(text: str, taken: list[bool]) -> Iterator[tuple[str, str, bool]]:
    tokens = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text)]
    # A title's full stop ("Dr. Smith") ends no sentence: drop it from the tokens.
    tokens = [
        t
        for k, t in enumerate(tokens)
        if not (t[0] == "." and k > 0 and tokens[k - 1][0].lower() in _TITLES)
    ]
    spans: list[tuple[int, int, bool, str]] = []  # (start, end, sentence-initial, before)

    def name_word(k: int) -> bool:
        word = tokens[k][0].rstrip("'’")
        return (
            _capitalised(word)
            and word.lower() not in _NOT_NAMES
            and _free(taken, tokens[k][1], tokens[k][2])
        )

    i, initial = 0, True
    while i < len(tokens):
        word = tokens[i][0]
        if word in _SENTENCE_ENDS:
            initial = True
            i += 1
            continue
        if not name_word(i):
            initial = initial and word in _OPENING
            i += 1
            continue
        j = i + 1
        while j < len(tokens):
            if name_word(j):
                j += 1
            elif tokens[j][0].lower() in _CONNECTORS and j + 1 < len(tokens) and name_word(j + 1):
                j += 2
            else:
                break
        first, before = i, tokens[i - 1][0].lower() if i > 0 else ""
        if tokens[i][0].lower() in _TITLES and j > i + 1:  # "Dr Smith": a person
            first, before = i + 1, tokens[i][0].lower()
        start, end = tokens[first][1], tokens[j - 1][2]
        surface = text[start:end].rstrip("'’")
        spans.append((start, start + len(surface), initial and first == i, before))
        i, initial = j, False
    # Words seen capitalised where a sentence does not force it: a span's words
    # after its first, and every word of a span that does not open a sentence.
    elsewhere = {
        w
        for s, e, first, _ in spans
        for w in (text[s:e].split()[1:] if first else text[s:e].split())
    }
    for start, end, first, before in spans:
        surface = text[start:end]
        shaped = " " not in surface and _named_by_shape(text, surface, end)
        if first and surface.split()[0] not in elsewhere and not shaped:
            # "Yesterday Jon …": the sentence capitalised "Yesterday", not a name; the
            # whole span is tentative (the subject may know "Ingrid Vasquez").
            if len(surface) >= 2 and _tentative(surface):
                yield surface, _name_type(surface, before), False
            rest = surface.split(maxsplit=1)
            if len(rest) < 2 or rest[1].split()[0].lower() in _CONNECTORS:
                continue
            start, surface, before = end - len(rest[1]), rest[1], ""
        if len(surface) < 2:
            continue
        _take(taken, start, end)
        yield surface, _name_type(surface, before), True


def _tentative(surface: str) -> bool:
    """A sentence opening worth keeping as a tentative name: words of letters only
    (a hyphenated or inner-capital word is the identifier rules' to take)."""
    return all(w.isalpha() for w in surface.split())


def _named_by_shape(text: str, surface: str, end: int) -> bool:
    """A sentence's first word is a name when a possessive or "and" + a capital follows
    ("Melanie's cousin …", "Jon and Gina …"): a capitalised common word rarely is."""
    after = text[end : end + 40]
    return surface.endswith(("'s", "’s")) or bool(_AND_NAME.match(after))


def _name_type(surface: str, before: str) -> str:
    if before in _TITLES:
        return "person"
    last = surface.split()[-1].rstrip(".").lower()
    if last in _ORG_HEADS:
        return "organisation"
    if last in _PLACE_HEADS:
        return "place"
    return "name"
