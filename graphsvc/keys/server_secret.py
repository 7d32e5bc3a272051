"""The server's MAC secret (InputTokens, cursors, receipts), kept in a 0600 file.

Created on first start with 32 random bytes. Rotating it (deleting the file)
invalidates every outstanding token and cursor, which is the intended effect.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from graphsvc.errors import InvalidInputError

__all__ = ["load_or_create_secret"]


def load_or_create_secret(path: Path) -> bytes:
    """Read the secret, creating it (mode 0600) when absent.

    Raises:
        InvalidInputError: the file exists but is readable by group/others or malformed.
    """
    if path.exists():
        if path.stat().st_mode & 0o077:
            raise InvalidInputError(f"{path} must not be readable by group or others (chmod 600)")
        raw = path.read_text().strip()
        try:
            secret = bytes.fromhex(raw)
        except ValueError as exc:
            raise InvalidInputError(f"{path} does not hold a hex secret") from exc
        if len(secret) < 32:
            raise InvalidInputError(f"{path} holds fewer than 32 bytes")
        return secret
    path.parent.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_bytes(32)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(secret.hex())
    os.replace(tmp, path)
    return secret
