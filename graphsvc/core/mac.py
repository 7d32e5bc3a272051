"""MAC-signed opaque objects: InputTokens, cursors and receipts (TOK-1, TOK-3, CUR-2).

Format: ``<prefix>.<base64url(payload JSON)>.<base64url(HMAC-SHA256)>``. Each kind
has its own MAC domain (the key is derived from the server secret and the kind),
so a cursor or receipt presented as an InputToken fails verification even if its
payload were shaped like a token. Expiry and scope are checked by the caller,
which knows the clock and the binding.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any, Literal

from graphsvc.errors import (
    CursorExpiredError,
    CursorInvalidError,
    GraphsvcError,
    TokenInvalidError,
)

__all__ = ["Kind", "key_fingerprint", "open_sealed", "seal"]

Kind = Literal["input-token", "cursor", "receipt"]
_PREFIX: dict[str, str] = {"input-token": "gti1", "cursor": "gcu1", "receipt": "grc1"}
_MAX_LEN = 16_384


def _key(secret: bytes, kind: Kind) -> bytes:
    return hmac.new(secret, f"graphsvc/{kind}/v1".encode(), hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def seal(secret: bytes, kind: Kind, payload: dict[str, Any]) -> str:
    """Serialise and MAC ``payload`` as an opaque string of ``kind``."""
    body = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode("utf-8")
    prefix = _PREFIX[kind]
    mac = hmac.new(_key(secret, kind), prefix.encode() + b"." + body, hashlib.sha256).digest()
    return f"{prefix}.{_b64(body)}.{_b64(mac)}"


def open_sealed(secret: bytes, kind: Kind, text: str) -> dict[str, Any]:
    """Verify and return the payload of an opaque string of ``kind``.

    Raises:
        TokenInvalidError: (input-token) anything malformed, forged or of another kind.
        CursorInvalidError: (cursor) it does not parse as a cursor.
        CursorExpiredError: (cursor/receipt) its MAC does not verify; (receipt) it
            does not parse either.
    """
    error: type[GraphsvcError] = TokenInvalidError if kind == "input-token" else CursorExpiredError
    # What does not parse is invalid; what parses but does not verify keeps ``error``.
    malformed: type[GraphsvcError] = CursorInvalidError if kind == "cursor" else error
    what = "InputToken" if kind == "input-token" else kind
    if not isinstance(text, str) or len(text) > _MAX_LEN:
        raise malformed(f"not a valid {what}")
    parts = text.split(".")
    if len(parts) != 3 or parts[0] != _PREFIX[kind]:
        raise malformed(f"not a valid {what}")
    try:
        body = _unb64(parts[1])
        mac = _unb64(parts[2])
    except (ValueError, UnicodeError) as exc:
        raise malformed(f"not a valid {what}") from exc
    expected = hmac.new(
        _key(secret, kind), parts[0].encode() + b"." + body, hashlib.sha256
    ).digest()
    if not hmac.compare_digest(mac, expected):
        raise error(f"{what} signature does not verify")
    try:
        payload = json.loads(body)
    except ValueError as exc:
        raise malformed(f"not a valid {what}") from exc
    if not isinstance(payload, dict):
        raise malformed(f"not a valid {what}")
    return payload


def key_fingerprint(secret: bytes, signing_key_id: str) -> str:
    """A public name for (MAC secret, active signing key), the same on every replica.

    Replicas of one database must share both: a cursor or InputToken sealed by one is
    opened by another, and lineage signed by one is verified by all. Keyed by the
    secret, so it tells nothing about the secret itself and cannot be computed
    without it; its own MAC domain, so it is no valid token, cursor or receipt MAC.
    """
    mac = hmac.new(secret, b"graphsvc/replica-keys/v1\n" + signing_key_id.encode(), hashlib.sha256)
    return "rk1:" + mac.hexdigest()[:32]
