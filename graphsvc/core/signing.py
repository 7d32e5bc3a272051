"""Ed25519 signing of lineage edges (SIG-1) and hash-chained signed events (SIG-2).

Pure: keys come in as bytes, times come in as strings; no file I/O and no clock.
Key storage lives in :mod:`graphsvc.keys.signing_keys`.

Signed lineage edge (SIG-1). The signature covers ``canonical_cbor`` of::

    {"v": 1, "subject": ..., "from": {"atomId": ..., "rev": ...},
     "to": {"atomId": ..., "rev": ...}, "relation": "derives_from",
     "signedAt": ..., "keyId": ...}

``from`` is the atom (the child revision) and ``to`` the parent revision it was cut
from, so the edge reads "from derives_from to".

Signed events (SIG-2). One hash chain per subject. Event ``n`` (``sequence`` 1, 2, …)
carries ``prevHash`` = :func:`event_hash` of event ``n - 1`` (64 zeros for the first).
The signature covers ``canonical_cbor`` of::

    {"v": 1, "subject", "sequence", "prevHash", "type", "payload", "signedAt", "keyId"}

and :func:`event_hash` is the SHA-256 of ``canonical_cbor`` of the same map *plus*
``"signature"`` — the chain commits to the exact signed record, so re-signing an
event afterwards (say, with another key) breaks the link from the event after it.

Key id: ``"ed25519:" + sha256(raw 32-byte public key)[:16 hex]`` — 64 bits is plenty to
tell apart the handful of keys one deployment rotates through, and short enough to
appear in file names (``keys/<keyId>.pub.json``).

Timestamps (``signedAt``): ISO-8601 UTC strings ending in ``Z`` (e.g.
``2025-01-02T03:04:05.123456Z``); :func:`format_signed_at` produces that form.
"""

from __future__ import annotations

import binascii
import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal

import nacl.exceptions
import nacl.signing

from graphsvc.core.canonical import canonical_cbor, sha256_hex
from graphsvc.errors import GraphsvcError, InvalidInputError, SignerError

__all__ = [
    "GENESIS_PREV_HASH",
    "KEY_ID_PREFIX",
    "RELATION_DERIVES_FROM",
    "SIGNABLE_VERSION",
    "SignableLink",
    "SignatureStatus",
    "SignedEvent",
    "event_hash",
    "format_signed_at",
    "key_id",
    "key_id_for_seed",
    "make_event",
    "public_key_for_seed",
    "sign_link",
    "signature_status",
    "verify_chain",
    "verify_event_signature",
    "verify_link",
]

SIGNABLE_VERSION: Final = 1
RELATION_DERIVES_FROM: Final = "derives_from"
GENESIS_PREV_HASH: Final = "0" * 64
KEY_ID_PREFIX: Final = "ed25519:"

_SEED_LEN = 32
_PUBLIC_KEY_LEN = 32
_SIGNATURE_HEX_LEN = 128
_HASH_HEX_LEN = 64


# --------------------------------------------------------------------------- keys


def key_id(public_key_bytes: bytes) -> str:
    """Return the key id of a raw Ed25519 public key.

    Args:
        public_key_bytes: the 32-byte raw public key.

    Returns:
        ``"ed25519:"`` followed by the first 16 hex characters of its SHA-256.

    Raises:
        SignerError: the key is not 32 bytes.
    """
    if not isinstance(public_key_bytes, bytes) or len(public_key_bytes) != _PUBLIC_KEY_LEN:
        raise SignerError("an Ed25519 public key is 32 raw bytes")
    return KEY_ID_PREFIX + sha256_hex(public_key_bytes)[:16]


def public_key_for_seed(signing_key_seed: bytes) -> bytes:
    """Return the raw 32-byte public key of an Ed25519 seed.

    Args:
        signing_key_seed: the 32-byte private seed.

    Returns:
        The raw public key.

    Raises:
        SignerError: the seed is not 32 bytes.
    """
    return bytes(_signing_key(signing_key_seed).verify_key)


def key_id_for_seed(signing_key_seed: bytes) -> str:
    """Return the key id of the public key belonging to ``signing_key_seed``.

    Args:
        signing_key_seed: the 32-byte private seed.

    Returns:
        The key id (see :func:`key_id`).

    Raises:
        SignerError: the seed is not 32 bytes.
    """
    return key_id(public_key_for_seed(signing_key_seed))


def _signing_key(seed: bytes) -> nacl.signing.SigningKey:
    if not isinstance(seed, bytes) or len(seed) != _SEED_LEN:
        raise SignerError("an Ed25519 signing seed is 32 raw bytes")
    try:
        return nacl.signing.SigningKey(seed)
    except (nacl.exceptions.CryptoError, TypeError, ValueError) as exc:  # pragma: no cover
        raise SignerError("cannot load the Ed25519 signing key") from exc


def _sign(seed: bytes, expected_key_id: str, message: bytes) -> str:
    key = _signing_key(seed)
    if key_id(bytes(key.verify_key)) != expected_key_id:
        # Signing under a keyId that does not belong to the seed would produce a record
        # no verifier can ever accept; refuse loudly instead.
        raise SignerError(
            "keyId does not belong to the signing key",
            details={"keyId": expected_key_id},
        )
    return key.sign(message).signature.hex()


def _verify(public_key_bytes: bytes, expected_key_id: str, message: bytes, sig_hex: str) -> bool:
    if not isinstance(public_key_bytes, bytes) or len(public_key_bytes) != _PUBLIC_KEY_LEN:
        return False
    if key_id(public_key_bytes) != expected_key_id:
        return False
    if not isinstance(sig_hex, str) or len(sig_hex) != _SIGNATURE_HEX_LEN:
        return False
    # Only lowercase hex is the canonical stored form; accepting other spellings would
    # let one signature have several byte representations in a bundle.
    if sig_hex != sig_hex.lower():
        return False
    try:
        signature = binascii.unhexlify(sig_hex)
        nacl.signing.VerifyKey(public_key_bytes).verify(message, signature)
    except (binascii.Error, ValueError, nacl.exceptions.BadSignatureError):
        return False
    except nacl.exceptions.CryptoError:  # pragma: no cover - malformed key material
        return False
    return True


# --------------------------------------------------------------------------- timestamps


def format_signed_at(moment: datetime) -> str:
    """Format an aware datetime as the canonical ``signedAt`` string.

    Args:
        moment: a timezone-aware datetime.

    Returns:
        ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` in UTC.

    Raises:
        InvalidInputError: ``moment`` is naive.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise InvalidInputError("signedAt needs a timezone-aware datetime")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _check_signed_at(value: object) -> str:
    if not isinstance(value, str) or not value.endswith("Z"):
        raise InvalidInputError("signedAt must be an ISO-8601 UTC string ending in 'Z'")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise InvalidInputError(f"signedAt is not ISO-8601: {value!r}") from exc
    if parsed.utcoffset() != timedelta(0):  # pragma: no cover - 'Z' always parses as UTC
        raise InvalidInputError("signedAt must be UTC")
    return value


def _check_text(value: object, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidInputError(f"{name} must be a non-empty string")
    return value


def _check_positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"{name} must be an integer >= 1")
    return value


# --------------------------------------------------------------------------- lineage


@dataclass(frozen=True, slots=True)
class SignableLink:
    """The signed content of a derives_from lineage edge (SIG-1).

    Attributes:
        subject: the owner both revisions belong to.
        from_atom_id: the derived atom (child).
        from_rev: the child's revision.
        to_atom_id: the atom it derives from (parent).
        to_rev: the parent revision that was atomised.
        signed_at: ISO-8601 UTC string ending in ``Z``.
        key_id: id of the signing key (see :func:`key_id`).
        relation: always ``"derives_from"``.
        v: format version, always 1.
    """

    subject: str
    from_atom_id: str
    from_rev: int
    to_atom_id: str
    to_rev: int
    signed_at: str
    key_id: str
    relation: str = RELATION_DERIVES_FROM
    v: int = SIGNABLE_VERSION

    def __post_init__(self) -> None:
        _check_text(self.subject, "subject")
        _check_text(self.from_atom_id, "from.atomId")
        _check_text(self.to_atom_id, "to.atomId")
        _check_positive_int(self.from_rev, "from.rev")
        _check_positive_int(self.to_rev, "to.rev")
        _check_signed_at(self.signed_at)
        _check_text(self.key_id, "keyId")
        if self.relation != RELATION_DERIVES_FROM:
            raise InvalidInputError("relation must be 'derives_from'")
        if self.v != SIGNABLE_VERSION or isinstance(self.v, bool):
            raise InvalidInputError("v must be 1")

    def to_dict(self) -> dict[str, Any]:
        """Return the SignableLink map exactly as it is signed (camelCase keys)."""
        return {
            "v": self.v,
            "subject": self.subject,
            "from": {"atomId": self.from_atom_id, "rev": self.from_rev},
            "to": {"atomId": self.to_atom_id, "rev": self.to_rev},
            "relation": self.relation,
            "signedAt": self.signed_at,
            "keyId": self.key_id,
        }

    def signable_bytes(self) -> bytes:
        """Return the canonical CBOR bytes the signature covers."""
        return canonical_cbor(self.to_dict())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SignableLink:
        """Parse the camelCase map produced by :meth:`to_dict`.

        Extra keys (such as a stored ``signature``) are ignored.

        Args:
            data: the map.

        Returns:
            The link.

        Raises:
            InvalidInputError: a field is missing or invalid.
        """
        try:
            src = data["from"]
            dst = data["to"]
            return cls(
                subject=data["subject"],
                from_atom_id=src["atomId"],
                from_rev=src["rev"],
                to_atom_id=dst["atomId"],
                to_rev=dst["rev"],
                signed_at=data["signedAt"],
                key_id=data["keyId"],
                relation=data["relation"],
                v=data["v"],
            )
        except (KeyError, TypeError) as exc:
            raise InvalidInputError(f"not a SignableLink: missing or bad field {exc}") from exc


def sign_link(signing_key_seed: bytes, link: SignableLink) -> str:
    """Sign a lineage edge.

    Args:
        signing_key_seed: the 32-byte Ed25519 seed whose key id is ``link.key_id``.
        link: the edge to sign.

    Returns:
        The 64-byte Ed25519 signature as 128 lowercase hex characters.

    Raises:
        SignerError: the seed is invalid or ``link.key_id`` is not its key id.
    """
    return _sign(signing_key_seed, link.key_id, link.signable_bytes())


def verify_link(public_key_bytes: bytes, link: SignableLink, signature_hex: str) -> bool:
    """Check a lineage edge's signature.

    Args:
        public_key_bytes: the raw 32-byte public key.
        link: the edge as stored.
        signature_hex: 128 lowercase hex characters.

    Returns:
        True only if the key's id equals ``link.key_id`` and the signature is valid.
    """
    return _verify(public_key_bytes, link.key_id, link.signable_bytes(), signature_hex)


SignatureStatus = Literal["verified", "invalid", "unknown_key"]


def signature_status(
    subject: str, edge: Mapping[str, Any], public_keys: Mapping[str, bytes]
) -> SignatureStatus:
    """Check one stored derives_from edge (SIG-1, its row as the store reads it:
    ``fromAtomId``, ``fromRev``, ``toAtomId``, ``toRev``, ``signedAt``, ``keyId``,
    ``signature``) against the deployment's public keys (key id → raw key):
    ``verified``, ``invalid`` (the signature does not match the stored edge, or the
    edge is malformed) or ``unknown_key``."""
    key = public_keys.get(str(edge.get("keyId")))
    if key is None:
        return "unknown_key"
    try:
        link = SignableLink(
            subject=subject,
            from_atom_id=edge["fromAtomId"],
            from_rev=int(edge["fromRev"]),
            to_atom_id=edge["toAtomId"],
            to_rev=int(edge["toRev"]),
            signed_at=edge["signedAt"],
            key_id=edge["keyId"],
        )
    except (GraphsvcError, KeyError, TypeError, ValueError):
        return "invalid"
    signature = edge.get("signature")
    if not isinstance(signature, str) or not verify_link(key, link, signature):
        return "invalid"
    return "verified"


# --------------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class SignedEvent:
    """One link of a subject's signed event chain (SIG-2).

    Attributes:
        subject: owner of the chain.
        sequence: 1-based position in the chain.
        prev_hash: :func:`event_hash` of the previous event; 64 zeros for sequence 1.
        type: event type, e.g. ``"atomisation_complete"``.
        payload: JSON-compatible map (str keys; no bytes) — stored verbatim so an
            auditor can re-hash it.
        signed_at: ISO-8601 UTC string ending in ``Z``.
        key_id: id of the signing key.
        signature: 128 lowercase hex characters over :meth:`signable_bytes`.
    """

    subject: str
    sequence: int
    prev_hash: str
    type: str
    # A dict is unhashable; leaving it out of __hash__ keeps events usable in sets.
    payload: Mapping[str, Any] = field(hash=False)
    signed_at: str
    key_id: str
    signature: str

    def __post_init__(self) -> None:
        _check_text(self.subject, "subject")
        _check_positive_int(self.sequence, "sequence")
        if not _is_hex(self.prev_hash, _HASH_HEX_LEN):
            raise InvalidInputError("prevHash must be 64 lowercase hex characters")
        _check_text(self.type, "type")
        _check_payload(self.payload)
        _check_signed_at(self.signed_at)
        _check_text(self.key_id, "keyId")
        if not isinstance(self.signature, str):
            raise InvalidInputError("signature must be a hex string")

    def signable_dict(self) -> dict[str, Any]:
        """Return the map the signature covers (camelCase keys, no signature)."""
        return {
            "v": SIGNABLE_VERSION,
            "subject": self.subject,
            "sequence": self.sequence,
            "prevHash": self.prev_hash,
            "type": self.type,
            "payload": dict(self.payload),
            "signedAt": self.signed_at,
            "keyId": self.key_id,
        }

    def signable_bytes(self) -> bytes:
        """Return the canonical CBOR bytes the signature covers."""
        return canonical_cbor(self.signable_dict())

    def to_dict(self) -> dict[str, Any]:
        """Return the stored form: :meth:`signable_dict` plus ``signature``."""
        out = self.signable_dict()
        out["signature"] = self.signature
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SignedEvent:
        """Parse the stored form produced by :meth:`to_dict`.

        Args:
            data: the map.

        Returns:
            The event.

        Raises:
            InvalidInputError: a field is missing, invalid, or ``v`` is not 1.
        """
        try:
            if data["v"] != SIGNABLE_VERSION or isinstance(data["v"], bool):
                raise InvalidInputError("event v must be 1")
            return cls(
                subject=data["subject"],
                sequence=data["sequence"],
                prev_hash=data["prevHash"],
                type=data["type"],
                payload=data["payload"],
                signed_at=data["signedAt"],
                key_id=data["keyId"],
                signature=data["signature"],
            )
        except (KeyError, TypeError) as exc:
            raise InvalidInputError(f"not a SignedEvent: missing or bad field {exc}") from exc


def _is_hex(value: object, length: int) -> bool:
    return (
        isinstance(value, str)
        and len(value) == length
        and all(c in "0123456789abcdef" for c in value)
    )


def _check_payload(payload: object) -> None:
    if not isinstance(payload, Mapping):
        raise InvalidInputError("payload must be a map")
    canonical_cbor(payload)
    try:
        # The payload is stored as JSON (bundle, database); a value JSON cannot hold
        # exactly (bytes) would make the stored event impossible to re-hash.
        json.dumps(payload, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"payload must be JSON-compatible: {exc}") from exc


def event_hash(event: SignedEvent) -> str:
    """Return the chain digest of an event (the next event's ``prevHash``).

    Args:
        event: the event.

    Returns:
        SHA-256 hex of ``canonical_cbor(event.to_dict())`` — signature included.
    """
    return sha256_hex(canonical_cbor(event.to_dict()))


def make_event(
    signing_key_seed: bytes,
    prev: SignedEvent | None,
    subject: str,
    type: str,
    payload: Mapping[str, Any],
    signed_at: str,
) -> SignedEvent:
    """Create and sign the next event of a subject's chain.

    Args:
        signing_key_seed: the 32-byte Ed25519 seed (the active key).
        prev: the chain's current last event, or None to start the chain.
        subject: the chain's subject; must equal ``prev.subject``.
        type: event type, e.g. ``"atomisation_complete"``.
        payload: JSON-compatible map with str keys.
        signed_at: ISO-8601 UTC string ending in ``Z``.

    Returns:
        The signed event with ``sequence = prev.sequence + 1`` (1 for the first) and
        ``prev_hash = event_hash(prev)`` (64 zeros for the first).

    Raises:
        InvalidInputError: a field is invalid or ``subject`` differs from ``prev``'s.
        SignerError: the seed is invalid.
    """
    if prev is not None and prev.subject != subject:
        raise InvalidInputError("an event chain never crosses subjects")
    sequence = 1 if prev is None else prev.sequence + 1
    prev_hash = GENESIS_PREV_HASH if prev is None else event_hash(prev)
    kid = key_id_for_seed(signing_key_seed)
    unsigned = SignedEvent(
        subject=subject,
        sequence=sequence,
        prev_hash=prev_hash,
        type=type,
        # A private deep copy: later changes to the caller's nested values must not
        # silently diverge from the signed bytes.
        payload=copy.deepcopy(dict(payload)),
        signed_at=signed_at,
        key_id=kid,
        signature="",
    )
    signature = _sign(signing_key_seed, kid, unsigned.signable_bytes())
    return SignedEvent(
        subject=subject,
        sequence=sequence,
        prev_hash=prev_hash,
        type=type,
        payload=unsigned.payload,
        signed_at=signed_at,
        key_id=kid,
        signature=signature,
    )


def verify_event_signature(event: SignedEvent, public_key_bytes: bytes) -> bool:
    """Check one event's signature (not its place in the chain).

    Args:
        event: the event.
        public_key_bytes: the raw 32-byte public key named by ``event.key_id``.

    Returns:
        True only if the key's id equals ``event.key_id`` and the signature is valid.
    """
    return _verify(public_key_bytes, event.key_id, event.signable_bytes(), event.signature)


def verify_chain(events: Sequence[SignedEvent], public_keys: Mapping[str, bytes]) -> list[str]:
    """Check a whole chain: order, links, signatures, subject.

    Args:
        events: the chain in stored order, starting at sequence 1.
        public_keys: key id → raw public key; retired keys included.

    Returns:
        Human-readable problems; an empty list means the chain verifies. An empty
        chain verifies.
    """
    problems: list[str] = []
    if not events:
        return problems
    subject = events[0].subject
    prev: SignedEvent | None = None
    for index, event in enumerate(events):
        label = f"event #{index + 1} (sequence {event.sequence})"
        if event.subject != subject:
            problems.append(f"{label}: subject {event.subject!r} differs from {subject!r}")
        if event.sequence != index + 1:
            problems.append(f"{label}: expected sequence {index + 1}")
        expected_prev = GENESIS_PREV_HASH if prev is None else event_hash(prev)
        if event.prev_hash != expected_prev:
            problems.append(f"{label}: prevHash does not match the previous event's hash")
        public_key = public_keys.get(event.key_id)
        if public_key is None:
            problems.append(f"{label}: unknown keyId {event.key_id!r}")
        elif not verify_event_signature(event, public_key):
            problems.append(f"{label}: bad signature")
        prev = event
    return problems
