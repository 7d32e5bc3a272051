"""A cursor's stored evaluation round-trips exactly, stored small (CUR-1)."""

from __future__ import annotations

import json
import math
import zlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphsvc.core.frozen_payload import decode_payload, encode_payload
from graphsvc.errors import CursorExpiredError

PAYLOAD = {
    "ranked": [
        {
            "atomId": f"a{i}",
            "rev": 1 + i % 3,
            "score": 1.0 / (i + 1),
            "breakdown": {
                "match": 0.5 / (i + 1),
                "semantic": None if i % 4 == 0 else 0.25 * i,
                "lexical": None,
                "usageFactor": 1.0,
                "candidate": i % 2 == 0,
            },
        }
        for i in range(300)
    ],
    "diagnostics": {"evaluation": {"solver": "fixed-point", "residual": 3.2e-7}},
    "evaluatedAt": 1_790_000_000.25,
}


def _same(a: Any, b: Any) -> bool:
    """Equal, with types kept (1 is not 1.0, True is not 1) and NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        if math.isnan(a):
            return math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return bool(a == b)


@pytest.mark.req("CUR-1")
def test_a_payload_round_trips_exactly_and_is_stored_smaller_than_its_json() -> None:
    stored = encode_payload(PAYLOAD)
    assert _same(decode_payload(stored), PAYLOAD)
    assert len(stored) * 2 < len(json.dumps(PAYLOAD, separators=(",", ":")))


@pytest.mark.req("CUR-1")
def test_rows_of_one_shape_are_stored_by_column_others_as_json() -> None:
    assert encode_payload(PAYLOAD).startswith(b"GSC1")
    mixed = {"ranked": [{"atomId": "a", "rev": 1}, {"atomId": "b"}]}
    nested = {"ranked": [{"b": {"x": 1.0}}, {"b": {"y": 1.0}}]}
    for payload in (mixed, nested, {"ranked": []}, {"ranked": [1, 2]}, {"diagnostics": {}}):
        stored = encode_payload(payload)
        assert not stored.startswith(b"GSC1")
        assert _same(decode_payload(stored), payload)


@pytest.mark.req("CUR-1")
def test_an_earlier_versions_stored_forms_still_decode() -> None:
    assert _same(decode_payload(json.dumps(PAYLOAD)), PAYLOAD)  # JSON text
    deflated = zlib.compress(json.dumps(PAYLOAD).encode("utf-8"), 1)  # deflated JSON
    assert _same(decode_payload(deflated), PAYLOAD)


@pytest.mark.req("CUR-1")
@pytest.mark.parametrize(
    "stored",
    [b"not deflate", "{not json", "[1, 2]", b"GSC1", b"GSC1\x05\x00\x00\x00abc"],
)
def test_a_payload_that_does_not_decode_expires_the_cursor(stored: str | bytes) -> None:
    with pytest.raises(CursorExpiredError):
        decode_payload(stored)


@pytest.mark.req("CUR-1")
def test_a_cut_or_lengthened_columnar_payload_expires_the_cursor() -> None:
    stored = encode_payload(PAYLOAD)
    for bad in (stored[:-1], stored[: len(stored) // 2], stored + b"\x00"):
        with pytest.raises(CursorExpiredError):
            decode_payload(bad)


_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
)


@st.composite
def _payloads(draw: st.DrawFn) -> dict[str, Any]:
    """Rows of one shape whose columns are one type, a mix, or constant."""
    keys = draw(st.lists(st.sampled_from(["atomId", "rev", "score", "x"]), unique=True))
    nested = draw(st.lists(st.sampled_from(["match", "semantic", "y"]), unique=True))
    n = draw(st.integers(min_value=1, max_value=12))

    def column() -> list[Any]:
        kind = draw(st.sampled_from(["mixed", "float", "float-or-none", "int", "const", "zeros"]))
        if kind == "float":
            return draw(st.lists(st.floats(), min_size=n, max_size=n))
        if kind == "float-or-none":
            return draw(st.lists(st.none() | st.floats(), min_size=n, max_size=n))
        if kind == "int":
            return draw(st.lists(st.integers(), min_size=n, max_size=n))
        if kind == "const":
            return [draw(_VALUE)] * n
        if kind == "zeros":
            return draw(st.lists(st.sampled_from([0.0, -0.0]), min_size=n, max_size=n))
        return draw(st.lists(_VALUE, min_size=n, max_size=n))

    top = {k: column() for k in keys}
    inner = {k: column() for k in nested}
    rows = [
        {**{k: v[i] for k, v in top.items()}, "b": {k: v[i] for k, v in inner.items()}}
        for i in range(n)
    ]
    return {"ranked": rows, "diagnostics": {"page": n}}


@pytest.mark.req("CUR-1")
@settings(max_examples=200, deadline=None)
@given(_payloads())
def test_any_ranking_of_one_shape_round_trips_with_its_types(payload: dict[str, Any]) -> None:
    assert _same(decode_payload(encode_payload(payload)), payload)
