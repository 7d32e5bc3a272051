"""MAC-sealed opaque objects: one MAC domain per kind (TOK-1, TOK-3)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

import pytest

from graphsvc.core.mac import open_sealed, seal
from graphsvc.errors import (
    CursorExpiredError,
    CursorInvalidError,
    GraphsvcError,
    TokenInvalidError,
)

SECRET = bytes(range(32))
PAYLOAD = {"tid": "t1", "sub": "s1", "exp": 123.5, "nested": {"b": 1, "a": [1, 2]}}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@pytest.mark.req("TOK-1")
@pytest.mark.parametrize("kind", ["input-token", "cursor", "receipt"])
def test_sealed_payload_round_trips(kind: Any) -> None:
    sealed = seal(SECRET, kind, PAYLOAD)
    assert open_sealed(SECRET, kind, sealed) == PAYLOAD
    assert sealed.count(".") == 2


@pytest.mark.req("TOK-1")
def test_seal_is_canonical_in_key_order() -> None:
    reordered = {k: PAYLOAD[k] for k in reversed(list(PAYLOAD))}
    assert seal(SECRET, "cursor", reordered) == seal(SECRET, "cursor", PAYLOAD)


@pytest.mark.req("TOK-3")
@pytest.mark.parametrize(
    ("presented_as", "sealed_as"),
    [("input-token", "cursor"), ("input-token", "receipt"), ("cursor", "input-token"),
     ("receipt", "cursor")],
)  # fmt: skip
def test_object_of_another_kind_is_rejected(presented_as: Any, sealed_as: Any) -> None:
    other = seal(SECRET, sealed_as, PAYLOAD)
    expected: type[GraphsvcError] = {
        "input-token": TokenInvalidError,
        "cursor": CursorInvalidError,  # another kind's prefix: it does not parse as a cursor
        "receipt": CursorExpiredError,
    }[presented_as]
    with pytest.raises(expected):
        open_sealed(SECRET, presented_as, other)


@pytest.mark.req("TOK-3")
def test_another_kinds_mac_under_this_kinds_prefix_does_not_verify() -> None:
    """Separate MAC domains: relabelling a cursor as a token is not enough."""
    cursor = seal(SECRET, "cursor", PAYLOAD)
    relabelled = "gti1" + cursor[cursor.index(".") :]
    with pytest.raises(TokenInvalidError, match="signature"):
        open_sealed(SECRET, "input-token", relabelled)


@pytest.mark.req("TOK-3")
def test_forged_and_tampered_tokens_are_rejected() -> None:
    forged = seal(b"\xff" * 32, "input-token", PAYLOAD)
    with pytest.raises(TokenInvalidError, match="signature"):
        open_sealed(SECRET, "input-token", forged)
    prefix, _, mac = seal(SECRET, "input-token", PAYLOAD).split(".")
    body = _b64(
        json.dumps({**PAYLOAD, "exp": 1e12}, sort_keys=True, separators=(",", ":")).encode()
    )
    with pytest.raises(TokenInvalidError, match="signature"):
        open_sealed(SECRET, "input-token", f"{prefix}.{body}.{mac}")


@pytest.mark.req("TOK-3")
@pytest.mark.parametrize(
    "text",
    ["", "token", "gti1", "gti1..", "gti1.a.b.c", "gti1.!!!.???", "gcu1.e30.AAAA", "x" * 20_000],
)
def test_malformed_strings_are_token_invalid(text: str) -> None:
    with pytest.raises(TokenInvalidError):
        open_sealed(SECRET, "input-token", text)


@pytest.mark.req("TOK-3")
def test_non_string_is_token_invalid() -> None:
    with pytest.raises(TokenInvalidError):
        open_sealed(SECRET, "input-token", 12345)  # type: ignore[arg-type]


@pytest.mark.req("TOK-3")
@pytest.mark.parametrize("body", [b"[1, 2]", b"not json", b'"text"'])
def test_validly_maced_non_object_payload_is_rejected(body: bytes) -> None:
    key = hmac.new(SECRET, b"graphsvc/input-token/v1", hashlib.sha256).digest()
    mac = hmac.new(key, b"gti1." + body, hashlib.sha256).digest()
    with pytest.raises(TokenInvalidError):
        open_sealed(SECRET, "input-token", f"gti1.{_b64(body)}.{_b64(mac)}")


@pytest.mark.req("TOK-3")
def test_errors_are_graphsvc_errors_with_stable_codes() -> None:
    with pytest.raises(GraphsvcError) as info:
        open_sealed(SECRET, "input-token", "nope")
    assert info.value.code == "TOKEN_INVALID"
    with pytest.raises(GraphsvcError) as info:
        open_sealed(SECRET, "cursor", "nope")
    assert info.value.code == "CURSOR_INVALID"  # does not parse
    good = seal(SECRET, "cursor", {"k": "search"})
    with pytest.raises(GraphsvcError) as info:
        open_sealed(SECRET, "cursor", good[:-4] + ("AAAA" if not good.endswith("AAAA") else "BBBB"))
    assert info.value.code == "CURSOR_EXPIRED"  # parses, but its MAC does not verify
    with pytest.raises(GraphsvcError) as info:
        open_sealed(SECRET, "receipt", "nope")
    assert info.value.code == "CURSOR_EXPIRED"  # receipts keep their one code


def test_the_key_fingerprint_names_secret_and_signing_key_without_revealing_either() -> None:
    from graphsvc.core.mac import key_fingerprint

    a = key_fingerprint(b"\x01" * 32, "ed25519:k1")
    assert a == key_fingerprint(b"\x01" * 32, "ed25519:k1")
    assert a != key_fingerprint(b"\x02" * 32, "ed25519:k1")
    assert a != key_fingerprint(b"\x01" * 32, "ed25519:k2")
    assert a.startswith("rk1:") and len(a) == 36
    assert ("01" * 32) not in a
