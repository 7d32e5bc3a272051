"""A cursor's stored evaluation round-trips exactly, deflated (CUR-1)."""

from __future__ import annotations

import json

import pytest

from graphsvc.core.frozen_payload import decode_payload, encode_payload
from graphsvc.errors import CursorExpiredError

PAYLOAD = {
    "ranked": [
        {
            "atomId": f"a{i}",
            "rev": 1 + i % 3,
            "score": 1.0 / (i + 1),
            "breakdown": {"lexical": None},
        }
        for i in range(300)
    ],
    "diagnostics": {"evaluation": {"solver": "fixed-point", "residual": 3.2e-7}},
}


@pytest.mark.req("CUR-1")
def test_a_payload_round_trips_exactly_and_is_stored_smaller_than_its_json() -> None:
    stored = encode_payload(PAYLOAD)
    assert decode_payload(stored) == PAYLOAD
    assert len(stored) * 4 < len(json.dumps(PAYLOAD, separators=(",", ":")))


@pytest.mark.req("CUR-1")
def test_an_earlier_versions_json_text_still_decodes() -> None:
    assert decode_payload(json.dumps(PAYLOAD)) == PAYLOAD


@pytest.mark.req("CUR-1")
@pytest.mark.parametrize("stored", [b"not deflate", "{not json", "[1, 2]"])
def test_a_payload_that_does_not_decode_expires_the_cursor(stored: str | bytes) -> None:
    with pytest.raises(CursorExpiredError):
        decode_payload(stored)
