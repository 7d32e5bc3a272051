"""The model-facing read text, formatVersion 2 (RD-4, RD-5; DESIGN §8).

This docstring is the documentation of the text format.

The text is one line of compact JSON (``separators=(",", ":")``, ``ensure_ascii=False``)
with every object's keys sorted (``sort_keys=True``), so the same bodies in the same
order always give the same bytes — the budget is measured on exactly these bytes
(RD-4, RD-8), and a host can hash or diff two reads. Because keys are sorted,
``evidence`` comes before ``formatVersion`` and ``memory``::

    {"evidence":[Block...],"formatVersion":2,"memory":[View...]}

The empty selection is ``{"evidence":[],"formatVersion":2,"memory":[]}``.

``memory`` — one View per presented revision, in selection order, each revision once
(a required body shared by several roots appears once)::

    {"links":[Link...],"ref":"atomId@rev","sources":[Source...],"text":"..."}

- ``ref`` is the revision as ``atomId@rev``.
- ``text`` is the body. A *source-quoting* view — one whose text is exactly the
  verified quoted range of one of its own citations — carries
  ``"quote":{"end":E,"ref":"eN","start":S,"unit":U}`` *instead of* ``text``: the words
  are in ``evidence`` once, and the view points at them (source ``eN``, range
  ``[S, E)`` in unit ``U``).
- Link, available: ``{"at":"logical|observed","orderKey":K?,"required":B,"role":R,
  "target":"atomId@rev"}``. Link, unavailable (target not permitted or missing, LNK-2):
  ``{"at":...,"orderKey":K?,"required":B,"role":R,"unavailable":true}`` — no target,
  no body, no reason. ``orderKey`` is present only when the link has one.
- Source: ``{"digest":D?,"range":{"end":E,"start":S,"unit":U}?,"ref":"eN"?,"uri":U,
  "version":V?,"verified":B}``; optional keys are left out when empty. ``ref`` is
  present on a verified citation that quotes its range and names its evidence source.
  A citation never implies that the whole source was presented (MAN-3).

``evidence`` — the verified quoted ranges, each once (RD-4: only verified citations of
the same source, version and range share cost)::

    {"digest":D?,"end":E,"omittedBefore":N?,"ref":"eN","start":S,"text":"...",
     "unit":U,"uri":U,"version":V?}

- One *source* is one ``(uri, version, digest, unit)``; it gets the id ``eN``
  (``e1``, ``e2``, … in order of first citation in ``memory``). Every block of that
  source carries the same ``ref``; a quote finds its block by range.
- Ranges of one source that overlap or touch merge into one block covering their
  union; blocks of a source are ordered by ``start``. A block after the first of its
  source records ``omittedBefore``: how many units of the source lie between the
  previous block's end and its start (text that was *not* presented).
- Units: ``byte`` = UTF-8 bytes, ``char`` = code points, ``line`` = runs ending in
  ``"\\n"`` (or at the end of the text).
- Blocks are ordered by source (first citation in ``memory``), then by ``start``.

The text never holds scores, diagnostics or audit data (RD-5); ``items`` of the read
result carry the refs and metadata, not a second copy of the bodies.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphsvc.core.selection_models import Body, Citation, PublicLink, RangeUnit, Ref
from graphsvc.errors import InvalidInputError

__all__ = [
    "EMPTY_TEXT",
    "FORMAT_VERSION",
    "EvidenceLayout",
    "SourceKey",
    "assemble",
    "dumps",
    "evidence_layout",
    "memory_entry",
    "render",
    "unique_bodies",
]

FORMAT_VERSION = 2

SourceKey = tuple[str, str | None, str | None, RangeUnit]


def dumps(obj: object) -> str:
    """Serialise one JSON value the way the read text does.

    ``sort_keys`` is what makes the text deterministic (dict insertion order would
    leak construction details into the bytes that are counted and hashed).

    Args:
        obj: a JSON-safe value.

    Returns:
        Compact JSON with sorted keys and raw (non-escaped) Unicode.

    Raises:
        TypeError: ``obj`` is not JSON-serialisable (a programming error).
    """
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


_HEAD = '{"evidence":['
_MIDDLE = '],"formatVersion":' + str(FORMAT_VERSION) + ',"memory":['
_TAIL = "]}"

EMPTY_TEXT = _HEAD + _MIDDLE + _TAIL


@dataclass(frozen=True, slots=True)
class EvidenceLayout:
    """The evidence part of a render, and the source ids the memory views point at.

    Attributes:
        source_ids: ``(uri, version, digest, unit)`` → ``"eN"``.
        blocks: the JSON text of each evidence block, in render order.
    """

    source_ids: Mapping[SourceKey, str]
    blocks: tuple[str, ...]


def unique_bodies(bodies: Sequence[Body]) -> list[Body]:
    """Drop repeated revisions, keeping the first occurrence (RD-5: bodies once).

    Args:
        bodies: bodies in selection order, possibly with repeats.

    Returns:
        The bodies in order, each revision once.

    Raises:
        InvalidInputError: the same revision is given twice with different content
            (a revision is immutable, so this is a store bug).
    """
    seen: dict[Ref, Body] = {}
    out: list[Body] = []
    for body in bodies:
        prior = seen.get(body.ref)
        if prior is None:
            seen[body.ref] = body
            out.append(body)
        elif prior != body:
            raise InvalidInputError(f"revision {body.ref.key} given twice with different content")
    return out


def _source_key(c: Citation) -> SourceKey:
    # Only quoting citations reach this, and they always have a unit.
    assert c.unit is not None
    return (c.uri, c.version, c.digest, c.unit)


def _split_lines(text: str) -> list[str]:
    # str.splitlines also breaks on \r, \v, \x1c…; the line unit only knows "\n".
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _slice_units(text: str, unit: RangeUnit, start: int, end: int) -> str:
    """Units ``[start, end)`` of ``text``, offsets relative to the text."""
    if unit == "char":
        return text[start:end]
    if unit == "line":
        return "".join(_split_lines(text)[start:end])
    try:
        return text.encode("utf-8")[start:end].decode("utf-8")
    except UnicodeDecodeError as exc:
        # Only inconsistent quotes of one source can cut a character in two.
        raise InvalidInputError("verified byte quotes of one source disagree") from exc


@dataclass(slots=True)
class _Span:
    start: int
    end: int
    text: str


def _merge_spans(unit: RangeUnit, spans: list[_Span]) -> list[_Span]:
    """Merge overlapping or touching spans of one source into blocks."""
    spans.sort(key=lambda s: (s.start, s.end))
    merged: list[_Span] = []
    for span in spans:
        if not merged or span.start > merged[-1].end:
            merged.append(_Span(span.start, span.end, span.text))
            continue
        cur = merged[-1]
        overlap_end = min(cur.end, span.end)
        ours = _slice_units(cur.text, unit, span.start - cur.start, overlap_end - cur.start)
        theirs = _slice_units(span.text, unit, 0, overlap_end - span.start)
        if ours != theirs:
            raise InvalidInputError("verified quotes of one source disagree where they overlap")
        if span.end > cur.end:
            if unit == "line" and cur.text and not cur.text.endswith("\n"):
                # A line without "\n" is the source's last; nothing can follow it.
                raise InvalidInputError("verified line quotes of one source disagree")
            cur.text += _slice_units(span.text, unit, cur.end - span.start, span.end - span.start)
            cur.end = span.end
    return merged


def evidence_layout(bodies: Sequence[Body]) -> EvidenceLayout:
    """Lay out the evidence of a selection: source ids and merged blocks.

    Args:
        bodies: the presented bodies in selection order, each once.

    Returns:
        The source ids and the JSON text of every evidence block.

    Raises:
        InvalidInputError: two verified quotes of the same source disagree on the text
            of their overlap.
    """
    source_ids: dict[SourceKey, str] = {}
    spans: dict[SourceKey, list[_Span]] = {}
    for body in bodies:
        for c in body.sources:
            if not c.quotes:
                continue
            key = _source_key(c)
            if key not in source_ids:
                source_ids[key] = f"e{len(source_ids) + 1}"
                spans[key] = []
            assert c.start is not None and c.end is not None and c.quoted_text is not None
            spans[key].append(_Span(c.start, c.end, c.quoted_text))

    blocks: list[str] = []
    for key, source_id in source_ids.items():
        uri, version, digest, unit = key
        previous_end: int | None = None
        for span in _merge_spans(unit, spans[key]):
            block: dict[str, Any] = {
                "ref": source_id,
                "uri": uri,
                "unit": unit,
                "start": span.start,
                "end": span.end,
                "text": span.text,
            }
            if version is not None:
                block["version"] = version
            if digest is not None:
                block["digest"] = digest
            if previous_end is not None:
                block["omittedBefore"] = span.start - previous_end
            previous_end = span.end
            blocks.append(dumps(block))
    return EvidenceLayout(source_ids=source_ids, blocks=tuple(blocks))


def _link_view(link: PublicLink) -> dict[str, Any]:
    view: dict[str, Any] = {"role": link.role, "at": link.at, "required": link.required}
    if link.order_key is not None:
        view["orderKey"] = link.order_key
    if link.unavailable or link.target is None:
        # LNK-2 safe form: nothing about the target, not even why it is unavailable.
        view["unavailable"] = True
    else:
        view["target"] = link.target.key
    return view


def _source_view(c: Citation, source_ids: Mapping[SourceKey, str]) -> dict[str, Any]:
    view: dict[str, Any] = {"uri": c.uri, "verified": c.verified}
    if c.version is not None:
        view["version"] = c.version
    if c.digest is not None:
        view["digest"] = c.digest
    if c.start is not None and c.end is not None and c.unit is not None:
        view["range"] = {"start": c.start, "end": c.end, "unit": c.unit}
    if c.quotes:
        view["ref"] = source_ids[_source_key(c)]
    return view


def memory_entry(body: Body, source_ids: Mapping[SourceKey, str]) -> str:
    """Render the memory view of one body.

    Args:
        body: the body.
        source_ids: the source ids of the whole selection (from
            :func:`evidence_layout` over a selection that contains ``body``).

    Returns:
        The compact JSON of the view.

    Raises:
        KeyError: ``source_ids`` lacks a source ``body`` quotes (a programming error:
            the layout was computed over another selection).
    """
    view: dict[str, Any] = {
        "ref": body.ref.key,
        "links": [_link_view(link) for link in body.links],
        "sources": [_source_view(c, source_ids) for c in body.sources],
    }
    quote = next((c for c in body.sources if c.quotes and c.quoted_text == body.text), None)
    if quote is None:
        view["text"] = body.text
    else:
        view["quote"] = {
            "ref": source_ids[_source_key(quote)],
            "start": quote.start,
            "end": quote.end,
            "unit": quote.unit,
        }
    return dumps(view)


def assemble(entries: Sequence[str], blocks: Sequence[str]) -> str:
    """Join rendered memory views and evidence blocks into the read text.

    The result equals ``dumps({"formatVersion": 2, "memory": [...],
    "evidence": [...]})`` of the parsed parts; building it by concatenation lets the
    packer reuse rendered views.

    Args:
        entries: memory views from :func:`memory_entry`, in selection order.
        blocks: evidence blocks from :func:`evidence_layout`.

    Returns:
        The read text.
    """
    return _HEAD + ",".join(blocks) + _MIDDLE + ",".join(entries) + _TAIL


def render(bodies: Sequence[Body]) -> str:
    """Render a selection as the formatVersion 2 read text.

    Args:
        bodies: the presented bodies in selection order (roots and their required
            bodies); a repeated revision is rendered once, at its first position.

    Returns:
        The deterministic read text described in the module docstring.

    Raises:
        InvalidInputError: a revision is repeated with different content, or two
            verified quotes of one source disagree on their overlap.
    """
    unique = unique_bodies(bodies)
    layout = evidence_layout(unique)
    return assemble([memory_entry(b, layout.source_ids) for b in unique], layout.blocks)
