"""The formatVersion 2 read text: shape, determinism, safe links, evidence (RD-4, RD-5)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphsvc.core.render import EMPTY_TEXT, FORMAT_VERSION, dumps, render
from graphsvc.core.selection_models import (
    Body,
    Citation,
    PublicLink,
    RangeUnit,
    Ref,
    unit_length,
)
from graphsvc.errors import InvalidInputError

A1 = Ref("a", 1)
B2 = Ref("b", 2)
C1 = Ref("c", 1)
SOURCE = "Alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu."


def quote(start: int, end: int, *, uri: str = "doc:s", version: str | None = "1") -> Citation:
    return Citation(uri, version, None, start, end, "char", True, SOURCE[start:end])


def parse(text: str) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(text)
    return out


@pytest.mark.req("RD-5")
def test_empty_selection_renders_the_fixed_empty_document() -> None:
    assert render([]) == EMPTY_TEXT == '{"evidence":[],"formatVersion":2,"memory":[]}'
    assert parse(EMPTY_TEXT) == {"evidence": [], "formatVersion": 2, "memory": []}


@pytest.mark.req("RD-5")
def test_memory_views_follow_selection_order_with_only_ref_text_links_sources() -> None:
    text = render([Body(B2, "second"), Body(A1, "first")])
    doc = parse(text)
    assert doc["formatVersion"] == FORMAT_VERSION == 2
    assert [m["ref"] for m in doc["memory"]] == ["b@2", "a@1"]
    assert doc["memory"][0] == {"ref": "b@2", "text": "second", "links": [], "sources": []}
    assert set(doc) == {"formatVersion", "memory", "evidence"}


@pytest.mark.req("RD-5")
def test_repeated_revision_is_rendered_once_at_first_position() -> None:
    a = Body(A1, "first")
    doc = parse(render([a, Body(B2, "x"), a]))
    assert [m["ref"] for m in doc["memory"]] == ["a@1", "b@2"]


@pytest.mark.req("RD-5")
def test_same_revision_with_different_content_is_rejected() -> None:
    with pytest.raises(InvalidInputError):
        render([Body(A1, "one"), Body(A1, "two")])


@pytest.mark.req("RD-4", "RD-5")
def test_render_is_compact_sorted_and_deterministic() -> None:
    bodies = [
        Body(
            A1,
            'naïve — 日本語 "quoted"\nline',
            (PublicLink("cites", "observed", False, "k", B2),),
            (Citation("doc:z", "3", "sha256:ab", 1, 4, "byte", False),),
        ),
        Body(B2, "b"),
    ]
    text = render(bodies)
    assert text == render(list(bodies))
    # Compact, sorted keys, raw Unicode: exactly what json.dumps with these options gives.
    assert text == json.dumps(
        parse(text), ensure_ascii=False, separators=(",", ":"), sort_keys=True
    )
    assert "日本語" in text and "\\u" not in text


@pytest.mark.req("RD-5")
def test_text_holds_no_scores_or_audit_fields() -> None:
    doc = parse(render([Body(A1, "x", (), (quote(0, 5),))]))
    flat = dumps(doc)
    for forbidden in ("score", "activation", "audit", "diagnostic", "receipt"):
        assert forbidden not in flat


@pytest.mark.req("LNK-2", "RD-5")
def test_unavailable_link_renders_in_safe_form_without_target() -> None:
    link = PublicLink("parent", "logical", True, "07", None, unavailable=True)
    doc = parse(render([Body(A1, "x", (link,))]))
    assert doc["memory"][0]["links"] == [
        {"role": "parent", "unavailable": True, "required": True, "at": "logical", "orderKey": "07"}
    ]
    bare = PublicLink("see", "observed", False, None, None, unavailable=True)
    doc = parse(render([Body(A1, "x", (bare,))]))
    assert doc["memory"][0]["links"] == [
        {"role": "see", "unavailable": True, "required": False, "at": "observed"}
    ]


@pytest.mark.req("LNK-2")
def test_unavailable_link_carrying_a_target_is_refused() -> None:
    with pytest.raises(InvalidInputError):
        PublicLink("parent", "logical", True, None, B2, unavailable=True)
    with pytest.raises(InvalidInputError):
        PublicLink("parent", "logical", True, None, None, unavailable=False)


@pytest.mark.req("RD-5")
def test_available_link_names_its_target_as_atom_at_rev() -> None:
    doc = parse(render([Body(A1, "x", (PublicLink("next", "observed", False, None, B2),))]))
    assert doc["memory"][0]["links"] == [
        {"role": "next", "at": "observed", "required": False, "target": "b@2"}
    ]


@pytest.mark.req("RD-4", "MAN-3")
def test_source_quoting_view_carries_quote_instead_of_text() -> None:
    c = quote(6, 16)
    doc = parse(render([Body(A1, SOURCE[6:16], (), (c,))]))
    view = doc["memory"][0]
    assert "text" not in view
    assert view["quote"] == {"ref": "e1", "start": 6, "end": 16, "unit": "char"}
    assert view["sources"] == [
        {
            "uri": "doc:s",
            "version": "1",
            "range": {"start": 6, "end": 16, "unit": "char"},
            "verified": True,
            "ref": "e1",
        }
    ]
    assert doc["evidence"] == [
        {
            "ref": "e1",
            "uri": "doc:s",
            "version": "1",
            "unit": "char",
            "start": 6,
            "end": 16,
            "text": SOURCE[6:16],
        }
    ]


@pytest.mark.req("RD-4")
def test_overlapping_and_touching_ranges_of_one_source_merge_into_one_block() -> None:
    bodies = [
        Body(A1, "summary a", (), (quote(0, 10),)),
        Body(B2, "summary b", (), (quote(5, 20), quote(20, 25))),
    ]
    doc = parse(render(bodies))
    assert len(doc["evidence"]) == 1
    block = doc["evidence"][0]
    assert (block["start"], block["end"], block["text"]) == (0, 25, SOURCE[0:25])
    assert "omittedBefore" not in block


@pytest.mark.req("RD-4")
def test_disjoint_later_range_records_what_was_omitted_before_it() -> None:
    doc = parse(render([Body(A1, "x", (), (quote(30, 40), quote(0, 10)))]))
    blocks = doc["evidence"]
    assert [(b["start"], b["end"]) for b in blocks] == [(0, 10), (30, 40)]
    assert "omittedBefore" not in blocks[0]
    assert blocks[1]["omittedBefore"] == 20
    assert {b["ref"] for b in blocks} == {"e1"}


@pytest.mark.req("RD-4")
def test_same_range_cited_by_two_bodies_is_presented_once() -> None:
    text = render([Body(A1, "x", (), (quote(0, 30),)), Body(B2, "y", (), (quote(0, 30),))])
    assert text.count(SOURCE[0:30]) == 1


@pytest.mark.req("RD-4")
def test_other_version_or_unverified_citations_never_share_evidence() -> None:
    bodies = [
        Body(A1, "x", (), (quote(0, 10, version="1"), quote(0, 10, version="2"))),
        Body(B2, "y", (), (Citation("doc:s", "1", None, 0, 40, "char", False),)),
    ]
    doc = parse(render(bodies))
    assert [(b["ref"], b["version"]) for b in doc["evidence"]] == [("e1", "1"), ("e2", "2")]
    assert doc["memory"][1]["sources"][0] == {
        "uri": "doc:s",
        "version": "1",
        "range": {"start": 0, "end": 40, "unit": "char"},
        "verified": False,
    }


@pytest.mark.req("RD-4")
def test_byte_and_line_ranges_merge_in_their_own_units() -> None:
    src = "héllo wörld\nsecond line\nthird\n"
    raw = src.encode()
    b1 = Citation("doc:b", None, None, 0, 7, "byte", True, raw[0:7].decode())
    b2 = Citation("doc:b", None, None, 3, 13, "byte", True, raw[3:13].decode())
    lines = src.splitlines(keepends=True)
    l1 = Citation("doc:l", None, None, 0, 2, "line", True, "".join(lines[0:2]))
    l2 = Citation("doc:l", None, None, 1, 3, "line", True, "".join(lines[1:3]))
    doc = parse(render([Body(A1, "x", (), (b1, b2, l1, l2))]))
    by_uri = {b["uri"]: b for b in doc["evidence"]}
    assert by_uri["doc:b"]["text"] == raw[0:13].decode()
    assert by_uri["doc:l"]["text"] == src
    assert (by_uri["doc:l"]["start"], by_uri["doc:l"]["end"]) == (0, 3)


@pytest.mark.req("RD-4")
def test_verified_quotes_disagreeing_on_their_overlap_are_rejected() -> None:
    c1 = Citation("doc:s", "1", None, 0, 5, "char", True, "Alpha")
    c2 = Citation("doc:s", "1", None, 3, 8, "char", True, "XXXXX")
    with pytest.raises(InvalidInputError):
        render([Body(A1, "x", (), (c1, c2))])


@pytest.mark.req("MAN-3")
def test_citation_invariants_are_enforced() -> None:
    with pytest.raises(InvalidInputError):
        Citation("doc:s", None, None, 0, 3, "char", True, "toolong")
    with pytest.raises(InvalidInputError):
        Citation("doc:s", None, None, 0, 3, "char", False, "abc")
    with pytest.raises(InvalidInputError):
        Citation("doc:s", None, None, 0, None, None)
    with pytest.raises(InvalidInputError):
        Citation("doc:s", None, None, 5, 3, "char")
    assert unit_length("a\nb", "line") == 2
    assert unit_length("a\n", "line") == 1
    assert unit_length("", "line") == 0
    assert unit_length("é", "byte") == 2


# -- property: any selection renders to a parseable, self-consistent document -----------

_UNITS: tuple[RangeUnit, ...] = ("char", "byte", "line")
_PROP_SOURCE = "ab\ncdé\n日本\nfg hi\n\njk lm no\npq 🙂 rs\ntu\n"


def _units(unit: RangeUnit) -> list[str]:
    if unit == "char":
        return list(_PROP_SOURCE)
    if unit == "line":
        return _PROP_SOURCE.splitlines(keepends=True)
    return list(_PROP_SOURCE)  # byte ranges are built on character boundaries below


@st.composite
def _citations(draw: st.DrawFn) -> Citation:
    unit = draw(st.sampled_from(_UNITS))
    pieces = _units(unit)
    start = draw(st.integers(0, len(pieces)))
    end = draw(st.integers(start, len(pieces)))
    quoted = "".join(pieces[start:end])
    if unit == "byte":
        start = len("".join(pieces[:start]).encode())
        end = start + len(quoted.encode())
    uri = draw(st.sampled_from(["doc:p", "doc:q"]))
    if draw(st.booleans()):
        return Citation(uri, "1", None, start, end, unit, True, quoted)
    return Citation(uri, "1", None, start, end, unit, draw(st.booleans()))


@st.composite
def _bodies(draw: st.DrawFn) -> list[Body]:
    n = draw(st.integers(0, 6))
    out = []
    for i in range(n):
        sources = tuple(draw(st.lists(_citations(), max_size=3)))
        quoting = [c for c in sources if c.quoted_text is not None]
        if quoting and draw(st.booleans()):
            text = draw(st.sampled_from(quoting)).quoted_text or ""
        else:
            text = draw(st.text(max_size=20))
        out.append(Body(Ref(f"n{i % 4}", 1 + i), text, (), sources))
    return out


def _source_slice(unit: str, start: int, end: int) -> str:
    if unit == "char":
        return _PROP_SOURCE[start:end]
    if unit == "byte":
        return _PROP_SOURCE.encode()[start:end].decode()
    return "".join(_PROP_SOURCE.splitlines(keepends=True)[start:end])


@pytest.mark.req("RD-4", "RD-5")
@settings(max_examples=200, deadline=None)
@given(_bodies())
def test_every_render_is_deterministic_and_its_evidence_is_the_source(bodies: list[Body]) -> None:
    text = render(bodies)
    assert text == render(bodies)
    doc = parse(text)
    assert [m["ref"] for m in doc["memory"]] == [b.ref.key for b in bodies]
    blocks = doc["evidence"]
    # Each block is the source's own text, blocks of one source are disjoint, sorted and
    # separated by the recorded gap.
    last_end: dict[str, int] = {}
    for block in blocks:
        assert block["text"] == _source_slice(block["unit"], block["start"], block["end"])
        prev = last_end.get(block["ref"])
        if prev is None:
            assert "omittedBefore" not in block
        else:
            assert block["start"] > prev
            assert block["omittedBefore"] == block["start"] - prev
        last_end[block["ref"]] = block["end"]
    # Every quote (of a view or a source) lies inside exactly one block of its source.
    for view, body in zip(doc["memory"], bodies, strict=True):
        refs = [s for s in view["sources"] if "ref" in s]
        assert len(refs) == sum(1 for c in body.sources if c.quotes)
        quotes = [view["quote"]] if "quote" in view else []
        quotes += [{"ref": s["ref"], **s["range"]} for s in refs]
        for q in quotes:
            holders = [
                b
                for b in blocks
                if b["ref"] == q["ref"] and b["start"] <= q["start"] and q["end"] <= b["end"]
            ]
            assert len(holders) == 1
        if "quote" in view:
            assert body.text == _source_slice(
                view["quote"]["unit"], view["quote"]["start"], view["quote"]["end"]
            )
        else:
            assert view["text"] == body.text
