"""Canonical CBOR, lineage signatures and signed event chains (SIG-1, SIG-2).

The golden vectors below were computed once by graphsvc.core and are checked in so
another implementation can reproduce the bytes exactly. The CBOR vectors are also
re-derived here by a tiny independent encoder that sorts map keys by their encoded
bytes (RFC 8949 §4.2.1), so they do not merely restate cbor2's output.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import struct
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphsvc.core.canonical import canonical_cbor, sha256_hex
from graphsvc.core.signing import (
    GENESIS_PREV_HASH,
    SignableLink,
    SignedEvent,
    event_hash,
    format_signed_at,
    key_id,
    key_id_for_seed,
    make_event,
    public_key_for_seed,
    sign_link,
    verify_chain,
    verify_event_signature,
    verify_link,
)
from graphsvc.errors import InvalidInputError, SignerError

# ----------------------------------------------------------------- golden inputs

TEST_SEED = bytes(range(1, 33))  # 0x01 0x02 … 0x20
OTHER_SEED = bytes([0x42]) * 32

GOLDEN_PUBLIC_KEY_HEX = "79b5562e8fe654f94078b112e8a98ba7901f853ae695bed7e0e3910bad049664"
GOLDEN_KEY_ID = "ed25519:65b60673d6ed884b"

GOLDEN_LINK_CBOR_HEX = (
    "a761760162746fa263726576026661746f6d49646b61746f6d2d706172656e746466726f6da2637265"
    "76016661746f6d49646a61746f6d2d6368696c64656b657949647818656432353531393a3635623630"
    "3637336436656438383462677375626a656374667375626a2d316872656c6174696f6e6c6465726976"
    "65735f66726f6d687369676e65644174781b323032352d30312d30325430333a30343a30352e303030"
    "3030305a"
)
GOLDEN_LINK_SIGNATURE_HEX = (
    "77a54a8272d2d357494ac03b3e3e67492f3715ae6a6e49a8780d25e053f873fe"
    "d817abe59bcd40f78bd8d70a4870e0f4276b836051156db36510b17092183302"
)

GOLDEN_EVENT_CBOR_HEX = (
    "a861760164747970657461746f6d69736174696f6e5f636f6d706c657465656b6579496478186564"
    "32353531393a36356236303637336436656438383462677061796c6f6164a46761746f6d49647382"
    "6661746f6d2d616661746f6d2d6268736f7572636549646b61746f6d2d706172656e746961746f6d"
    "436f756e740269736f7572636552657602677375626a656374667375626a2d316870726576486173"
    "68784030303030303030303030303030303030303030303030303030303030303030303030303030"
    "3030303030303030303030303030303030303030303030303030306873657175656e636501687369"
    "676e65644174781b323032352d30312d30325430333a30343a30362e3030303030305a"
)
GOLDEN_EVENT_SIGNATURE_HEX = (
    "e2c79ddc3ea88eaa922c082879765fc9a71933d8169df7de28692ddeb4daac5f"
    "f2743fe9d0f3f9b95382c6f05ec2f27c9164789e0e8122965070fd786123fe02"
)
GOLDEN_EVENT_HASH_HEX = "705b14b613792e2d7217fc6c5632f4e7ca51878418b457efbf3defac99ba1dec"


def golden_link() -> SignableLink:
    return SignableLink(
        subject="subj-1",
        from_atom_id="atom-child",
        from_rev=1,
        to_atom_id="atom-parent",
        to_rev=2,
        signed_at="2025-01-02T03:04:05.000000Z",
        key_id=GOLDEN_KEY_ID,
    )


GOLDEN_EVENT_PAYLOAD = {
    "sourceId": "atom-parent",
    "sourceRev": 2,
    "atomIds": ["atom-a", "atom-b"],
    "atomCount": 2,
}


def golden_event() -> SignedEvent:
    return make_event(
        TEST_SEED,
        None,
        "subj-1",
        "atomisation_complete",
        GOLDEN_EVENT_PAYLOAD,
        "2025-01-02T03:04:06.000000Z",
    )


# ----------------------------------------------------------------- reference encoder


def _head(major: int, value: int) -> bytes:
    if value < 24:
        return bytes([(major << 5) | value])
    for info, fmt in ((24, ">B"), (25, ">H"), (26, ">I"), (27, ">Q")):
        if value < 1 << (8 * struct.calcsize(fmt)):
            return bytes([(major << 5) | info]) + struct.pack(fmt, value)
    raise ValueError(value)


def ref_encode(obj: Any) -> bytes:
    """Independent RFC 8949 §4.2.1 encoder for the value kinds used in signing."""
    if obj is None:
        return b"\xf6"
    if obj is True:
        return b"\xf5"
    if obj is False:
        return b"\xf4"
    if isinstance(obj, int):
        return _head(0, obj) if obj >= 0 else _head(1, -1 - obj)
    if isinstance(obj, str):
        raw = obj.encode("utf-8")
        return _head(3, len(raw)) + raw
    if isinstance(obj, bytes):
        return _head(2, len(obj)) + obj
    if isinstance(obj, list):
        return _head(4, len(obj)) + b"".join(ref_encode(x) for x in obj)
    if isinstance(obj, dict):
        # The §4.2.1 rule itself: sort by the encoded key bytes, lexicographically.
        pairs = sorted((ref_encode(k), ref_encode(v)) for k, v in obj.items())
        return _head(5, len(pairs)) + b"".join(k + v for k, v in pairs)
    raise TypeError(type(obj))


# ----------------------------------------------------------------- canonical CBOR


@pytest.mark.req("SIG-1")
def test_map_keys_sort_by_encoded_bytes_checked_by_hand() -> None:
    # Encoded keys: "a"=6161, "b"=6162, "B"=6142, "aa"=626161, "ab"=626162.
    # Bytewise: 6142 < 6161 < 6162 < 626161 < 626162 → B, a, b, aa, ab
    # (shorter keys first because the length lives in the first byte).
    value = {"b": 1, "a": 2, "aa": 3, "B": 4, "ab": 5}
    expected = bytes.fromhex("a56142046161026162016261610362616205")
    assert canonical_cbor(value) == expected


@pytest.mark.req("SIG-1")
def test_long_text_keys_still_sort_length_first() -> None:
    # A 24-byte key gets a 2-byte header (0x78 0x18), which sorts after every key of
    # 23 bytes or fewer regardless of content.
    long_key, short_key = "a" * 24, "z" * 23
    encoded = canonical_cbor({long_key: 0, short_key: 0})
    assert encoded == bytes.fromhex("a2") + ref_encode(short_key) + b"\x00" + (
        ref_encode(long_key) + b"\x00"
    )


@pytest.mark.req("SIG-1")
def test_numbers_use_shortest_forms() -> None:
    assert canonical_cbor(23) == bytes.fromhex("17")
    assert canonical_cbor(24) == bytes.fromhex("1818")
    assert canonical_cbor(256) == bytes.fromhex("190100")
    assert canonical_cbor(-1) == bytes.fromhex("20")
    assert canonical_cbor(2**32) == bytes.fromhex("1b0000000100000000")
    assert canonical_cbor(1.5) == bytes.fromhex("f93e00")  # half precision
    assert canonical_cbor(100000.0) == bytes.fromhex("fa47c35000")  # single
    assert canonical_cbor(0.1) == bytes.fromhex("fb3fb999999999999a")  # double


@pytest.mark.req("SIG-1")
@pytest.mark.parametrize(
    "bad",
    [
        math.nan,
        math.inf,
        -math.inf,
        {"x": [1, math.nan]},
        {1: "int key"},
        {b"k": "bytes key"},
        {"nested": {(1, 2): 3}},
        2**64,
        -(2**64) - 1,
        {"s": {1, 2}},
        object(),
    ],
)
def test_values_outside_the_model_are_invalid_input(bad: object) -> None:
    with pytest.raises(InvalidInputError):
        canonical_cbor(bad)


@pytest.mark.req("SIG-1")
def test_sha256_hex_of_empty_input() -> None:
    assert sha256_hex(b"") == ("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")


_json_leaves = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text()
_json_values = st.recursive(
    _json_leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=20,
)


@pytest.mark.req("SIG-1")
@given(_json_values)
def test_canonical_cbor_matches_the_reference_encoder(value: Any) -> None:
    assert canonical_cbor(value) == ref_encode(value)


@pytest.mark.req("SIG-1")
@given(st.dictionaries(st.text(), st.integers(0, 10), max_size=8))
def test_key_insertion_order_never_changes_the_bytes(value: dict[str, int]) -> None:
    reordered = dict(reversed(list(value.items())))
    assert canonical_cbor(reordered) == canonical_cbor(value)


# ----------------------------------------------------------------- golden vectors


@pytest.mark.req("SIG-4")
def test_key_id_is_a_hash_of_the_public_key() -> None:
    public_key = public_key_for_seed(TEST_SEED)
    assert public_key.hex() == GOLDEN_PUBLIC_KEY_HEX
    assert key_id(public_key) == GOLDEN_KEY_ID
    assert "ed25519:" + sha256_hex(public_key)[:16] == GOLDEN_KEY_ID
    assert key_id_for_seed(TEST_SEED) == GOLDEN_KEY_ID


@pytest.mark.req("SIG-1")
def test_signable_link_golden_cbor_bytes() -> None:
    link = golden_link()
    assert link.signable_bytes().hex() == GOLDEN_LINK_CBOR_HEX
    assert ref_encode(link.to_dict()).hex() == GOLDEN_LINK_CBOR_HEX
    assert link.to_dict() == {
        "v": 1,
        "subject": "subj-1",
        "from": {"atomId": "atom-child", "rev": 1},
        "to": {"atomId": "atom-parent", "rev": 2},
        "relation": "derives_from",
        "signedAt": "2025-01-02T03:04:05.000000Z",
        "keyId": GOLDEN_KEY_ID,
    }


@pytest.mark.req("SIG-1")
def test_signable_link_golden_signature() -> None:
    signature = sign_link(TEST_SEED, golden_link())
    assert signature == GOLDEN_LINK_SIGNATURE_HEX
    assert verify_link(bytes.fromhex(GOLDEN_PUBLIC_KEY_HEX), golden_link(), signature)


@pytest.mark.req("SIG-2")
def test_signed_event_golden_bytes_signature_and_hash() -> None:
    event = golden_event()
    assert event.sequence == 1
    assert event.prev_hash == GENESIS_PREV_HASH == "0" * 64
    assert event.signable_bytes().hex() == GOLDEN_EVENT_CBOR_HEX
    assert ref_encode(event.signable_dict()).hex() == GOLDEN_EVENT_CBOR_HEX
    assert event.signature == GOLDEN_EVENT_SIGNATURE_HEX
    assert event_hash(event) == GOLDEN_EVENT_HASH_HEX
    assert event_hash(event) == sha256_hex(ref_encode(event.to_dict()))


# ----------------------------------------------------------------- lineage signatures


@pytest.mark.req("SIG-1")
@pytest.mark.parametrize(
    "change",
    [
        {"subject": "subj-2"},
        {"from_atom_id": "atom-other"},
        {"from_rev": 2},
        {"to_atom_id": "atom-other"},
        {"to_rev": 3},
        {"signed_at": "2025-01-02T03:04:05.000001Z"},
    ],
)
def test_any_changed_link_field_fails_verification(change: dict[str, Any]) -> None:
    tampered = dataclasses.replace(golden_link(), **change)
    assert not verify_link(
        bytes.fromhex(GOLDEN_PUBLIC_KEY_HEX), tampered, GOLDEN_LINK_SIGNATURE_HEX
    )


@pytest.mark.req("SIG-1")
def test_link_verification_rejects_wrong_key_and_malformed_signatures() -> None:
    link = golden_link()
    other_public = public_key_for_seed(OTHER_SEED)
    public = bytes.fromhex(GOLDEN_PUBLIC_KEY_HEX)
    assert not verify_link(other_public, link, GOLDEN_LINK_SIGNATURE_HEX)
    assert not verify_link(public, link, GOLDEN_LINK_SIGNATURE_HEX.upper())
    assert not verify_link(public, link, GOLDEN_LINK_SIGNATURE_HEX[:-2])
    assert not verify_link(public, link, "zz" * 64)
    assert not verify_link(public[:31], link, GOLDEN_LINK_SIGNATURE_HEX)


@pytest.mark.req("SIG-1")
def test_signing_under_a_foreign_key_id_is_refused() -> None:
    with pytest.raises(SignerError):
        sign_link(OTHER_SEED, golden_link())
    with pytest.raises(SignerError):
        sign_link(b"short", golden_link())


@pytest.mark.req("SIG-1")
def test_link_round_trips_through_its_dict_form() -> None:
    link = golden_link()
    assert SignableLink.from_dict({**link.to_dict(), "signature": "ignored"}) == link
    with pytest.raises(InvalidInputError):
        SignableLink.from_dict({"v": 1})
    with pytest.raises(InvalidInputError):
        SignableLink.from_dict({**link.to_dict(), "relation": "part_of"})


@pytest.mark.req("SIG-1")
@pytest.mark.parametrize(
    "signed_at",
    ["2025-01-02T03:04:05+00:00", "2025-01-02 03:04:05", "yesterday", "", "2025-13-01T00:00Z"],
)
def test_signed_at_must_be_iso_utc_with_z(signed_at: str) -> None:
    with pytest.raises(InvalidInputError):
        dataclasses.replace(golden_link(), signed_at=signed_at)


@pytest.mark.req("SIG-1")
def test_format_signed_at_gives_the_z_form() -> None:
    import datetime as dt

    moment = dt.datetime(2025, 1, 2, 4, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert format_signed_at(moment) == "2025-01-02T03:04:05.000000Z"
    with pytest.raises(InvalidInputError):
        format_signed_at(dt.datetime(2025, 1, 2))  # naive on purpose


# ----------------------------------------------------------------- event chains


def make_chain(n: int, seed: bytes = TEST_SEED, subject: str = "subj-1") -> list[SignedEvent]:
    events: list[SignedEvent] = []
    prev: SignedEvent | None = None
    for i in range(1, n + 1):
        prev = make_event(
            seed, prev, subject, "atomisation_complete", {"i": i}, f"2025-01-02T03:04:{i:02d}Z"
        )
        events.append(prev)
    return events


KEYS = {GOLDEN_KEY_ID: bytes.fromhex(GOLDEN_PUBLIC_KEY_HEX)}


@pytest.mark.req("SIG-2")
def test_intact_chain_verifies_and_links_by_hash() -> None:
    chain = make_chain(4)
    assert verify_chain(chain, KEYS) == []
    assert [e.sequence for e in chain] == [1, 2, 3, 4]
    for prev, event in itertools.pairwise(chain):
        assert event.prev_hash == event_hash(prev)
    assert verify_chain([], KEYS) == []


@pytest.mark.req("SIG-2")
def test_tampered_payload_fails_its_signature_and_the_next_link() -> None:
    chain = make_chain(3)
    chain[1] = dataclasses.replace(chain[1], payload={"i": 99})
    problems = verify_chain(chain, KEYS)
    assert any("event #2" in p and "bad signature" in p for p in problems)
    assert any("event #3" in p and "prevHash" in p for p in problems)


@pytest.mark.req("SIG-2")
def test_reordered_chain_fails() -> None:
    chain = make_chain(3)
    problems = verify_chain([chain[0], chain[2], chain[1]], KEYS)
    assert any("expected sequence 2" in p for p in problems)
    assert any("prevHash" in p for p in problems)


@pytest.mark.req("SIG-2")
def test_gap_in_chain_fails() -> None:
    chain = make_chain(4)
    problems = verify_chain([chain[0], chain[1], chain[3]], KEYS)
    assert any("expected sequence 3" in p for p in problems)


@pytest.mark.req("SIG-2")
def test_chain_not_starting_at_one_fails() -> None:
    chain = make_chain(3)
    problems = verify_chain(chain[1:], KEYS)
    assert any("expected sequence 1" in p for p in problems)


@pytest.mark.req("SIG-2")
def test_event_signed_by_unknown_or_wrong_key_fails() -> None:
    chain = make_chain(2)
    assert any("unknown keyId" in p for p in verify_chain(chain, {}))
    # The right key id mapped to another key: the signature check must fail.
    wrong = {GOLDEN_KEY_ID: public_key_for_seed(OTHER_SEED)}
    assert any("bad signature" in p for p in verify_chain(chain, wrong))


@pytest.mark.req("SIG-2", "SIG-4")
def test_chain_spanning_a_key_rotation_verifies_with_both_public_keys() -> None:
    first = make_chain(2)
    third = make_event(
        OTHER_SEED, first[-1], "subj-1", "atomisation_complete", {}, "2025-02-01T00:00:00Z"
    )
    chain = [*first, third]
    keys = {**KEYS, key_id_for_seed(OTHER_SEED): public_key_for_seed(OTHER_SEED)}
    assert third.key_id != first[0].key_id
    assert verify_chain(chain, keys) == []
    assert any("unknown keyId" in p for p in verify_chain(chain, KEYS))


@pytest.mark.req("SIG-2")
def test_chain_never_crosses_subjects() -> None:
    chain = make_chain(1)
    with pytest.raises(InvalidInputError):
        make_event(
            TEST_SEED, chain[0], "subj-2", "atomisation_complete", {}, "2025-01-02T00:00:00Z"
        )
    forged = dataclasses.replace(make_chain(2)[1], subject="subj-2")
    assert any("subject" in p for p in verify_chain([chain[0], forged], KEYS))


@pytest.mark.req("SIG-2")
def test_resigned_event_breaks_the_link_from_its_successor() -> None:
    chain = make_chain(2)
    resigned = make_event(
        OTHER_SEED, None, "subj-1", "atomisation_complete", {"i": 1}, chain[0].signed_at
    )
    keys = {**KEYS, key_id_for_seed(OTHER_SEED): public_key_for_seed(OTHER_SEED)}
    problems = verify_chain([resigned, chain[1]], keys)
    assert problems == ["event #2 (sequence 2): prevHash does not match the previous event's hash"]


@pytest.mark.req("SIG-2")
def test_event_round_trips_through_its_stored_form() -> None:
    event = golden_event()
    stored = event.to_dict()
    assert stored["signature"] == GOLDEN_EVENT_SIGNATURE_HEX
    assert SignedEvent.from_dict(stored) == event
    assert verify_event_signature(
        SignedEvent.from_dict(stored), bytes.fromhex(GOLDEN_PUBLIC_KEY_HEX)
    )
    with pytest.raises(InvalidInputError):
        SignedEvent.from_dict({**stored, "v": 2})
    with pytest.raises(InvalidInputError):
        SignedEvent.from_dict({k: v for k, v in stored.items() if k != "prevHash"})


@pytest.mark.req("SIG-2")
@pytest.mark.parametrize("payload", [{"b": b"bytes"}, {"f": math.nan}, {1: "x"}])
def test_event_payload_must_be_json_compatible(payload: dict[Any, Any]) -> None:
    with pytest.raises(InvalidInputError):
        make_event(TEST_SEED, None, "subj-1", "t", payload, "2025-01-02T00:00:00Z")


@pytest.mark.req("SIG-2")
def test_event_payload_is_a_private_copy() -> None:
    payload: dict[str, Any] = {"atomIds": ["a"]}
    event = make_event(TEST_SEED, None, "subj-1", "t", payload, "2025-01-02T00:00:00Z")
    payload["atomIds"].append("b")
    assert event.payload == {"atomIds": ["a"]}
    assert verify_chain([event], KEYS) == []
    assert len({event, event}) == 1  # hashable despite the dict payload
