"""The deployment's Ed25519 key ring on disk (SIG-4).

One JSON file holds the active signing seed and the public keys of every retired
key, so signatures made before a rotation still verify::

    {"version": 1,
     "active": {"seed": "<64 hex>", "publicKey": "<64 hex>", "keyId": "ed25519:…"},
     "retired": [{"publicKey": "<64 hex>", "keyId": "ed25519:…"}, …]}

The file is created on first start with mode 0600. A file that any group or other
permission bit is set on is refused (``SignerError``): a signing key others can read
(or replace) no longer proves who signed. Every write is atomic (temporary file in the
same directory, fsync, then ``os.replace``), so a crash never leaves half a key file.
A retired key's seed is discarded on rotation — only its public key is kept. A
symbolic link or anything but a regular file is refused too.

This module is a single-process adapter: two processes rotating the same file at once
are not coordinated (the last rename wins); creation, however, is safe against a
concurrent first start (the file is published with ``os.link``, which fails if another
process got there first, and the loser loads the winner's key).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nacl.signing

from graphsvc.core.signing import key_id, public_key_for_seed
from graphsvc.errors import SignerError

__all__ = ["KEY_FILE_MODE", "KeyRing", "RetiredKey"]

KEY_FILE_MODE = 0o600
_FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class RetiredKey:
    """A public key that no longer signs but still verifies.

    Attributes:
        key_id: its key id.
        public_key: raw 32-byte public key.
    """

    key_id: str
    public_key: bytes


class KeyRing:
    """The active signing key plus retired public keys, backed by one file.

    Use :meth:`load_or_create`; the constructor does no I/O.
    """

    def __init__(self, path: Path, active_seed: bytes, retired: list[RetiredKey]) -> None:
        self._path = path
        self._seed = active_seed
        self._public_key = public_key_for_seed(active_seed)
        self._key_id = key_id(self._public_key)
        self._retired = list(retired)

    # ------------------------------------------------------------------ accessors

    @property
    def path(self) -> Path:
        """The key file."""
        return self._path

    @property
    def active_seed(self) -> bytes:
        """The 32-byte seed of the key that signs now."""
        return self._seed

    @property
    def active_key_id(self) -> str:
        """The key id of the key that signs now."""
        return self._key_id

    @property
    def active_public_key(self) -> bytes:
        """The raw public key of the key that signs now."""
        return self._public_key

    @property
    def retired(self) -> tuple[RetiredKey, ...]:
        """Retired keys, oldest first."""
        return tuple(self._retired)

    def public_keys(self) -> dict[str, bytes]:
        """Return every verifying key: key id → raw public key (active included)."""
        keys = {r.key_id: r.public_key for r in self._retired}
        keys[self._key_id] = self._public_key
        return keys

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    def load_or_create(cls, path: str | os.PathLike[str]) -> KeyRing:
        """Load the key file, creating it (mode 0600, fresh key) if it does not exist.

        Args:
            path: the key file; its parent directory is created if missing.

        Returns:
            The key ring.

        Raises:
            SignerError: the file is group/other accessible, unreadable, malformed, or
                its stored key ids do not match its keys.
        """
        key_path = Path(path)
        if not key_path.exists():
            seed = bytes(nacl.signing.SigningKey.generate())
            ring = cls(key_path, seed, [])
            try:
                key_path.parent.mkdir(parents=True, exist_ok=True)
                _write_atomic(key_path, ring._serialise(), exclusive=True)
            except FileExistsError:
                pass  # another process created it first: use its key, below
            except OSError as exc:
                raise SignerError(f"cannot create the key file {key_path}") from exc
            else:
                return ring
        return cls._load(key_path)

    @classmethod
    def _load(cls, key_path: Path) -> KeyRing:
        try:
            fd = os.open(key_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError as exc:
            raise SignerError(f"cannot open the key file {key_path}") from exc
        try:
            # Check the file actually opened, not a path that could be swapped between
            # the check and the read.
            st = os.fstat(fd)
            mode = stat.S_IMODE(st.st_mode)
            if not stat.S_ISREG(st.st_mode):
                raise SignerError(f"key file {key_path} is not a regular file")
            if mode & 0o077:
                raise SignerError(
                    f"key file {key_path} has mode {mode:o}; it must not be accessible "
                    "to group or others (chmod 600)",
                    details={"path": str(key_path), "mode": f"{mode:o}"},
                )
            with os.fdopen(fd, "rb", closefd=False) as fh:
                raw = fh.read()
        except OSError as exc:
            raise SignerError(f"cannot read the key file {key_path}") from exc
        finally:
            os.close(fd)
        return cls._parse(key_path, raw)

    @classmethod
    def _parse(cls, key_path: Path, raw: bytes) -> KeyRing:
        try:
            doc = json.loads(raw.decode("utf-8"))
            if doc.get("version") != _FORMAT_VERSION:
                raise ValueError("unsupported version")
            active = doc["active"]
            seed = bytes.fromhex(active["seed"])
            ring = cls(key_path, seed, [])
            if active.get("keyId") != ring.active_key_id:
                raise ValueError("active keyId does not match its seed")
            retired: list[RetiredKey] = []
            for item in doc.get("retired", []):
                public_key = bytes.fromhex(item["publicKey"])
                if key_id(public_key) != item["keyId"]:
                    raise ValueError("retired keyId does not match its public key")
                retired.append(RetiredKey(item["keyId"], public_key))
        except SignerError as exc:
            raise SignerError(f"key file {key_path} holds an invalid key") from exc
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SignerError(f"key file {key_path} is malformed: {exc}") from exc
        ring._retired = retired
        return ring

    def rotate(self) -> str:
        """Make a fresh key active; the old one keeps verifying as a retired key.

        The old seed is discarded. The file is rewritten atomically.

        Returns:
            The new active key id.

        Raises:
            SignerError: the file cannot be written (the ring is then unchanged).
        """
        new_seed = bytes(nacl.signing.SigningKey.generate())
        rotated = KeyRing(
            self._path,
            new_seed,
            [*self._retired, RetiredKey(self._key_id, self._public_key)],
        )
        try:
            _write_atomic(self._path, rotated._serialise(), exclusive=False)
        except OSError as exc:
            raise SignerError(f"cannot write the key file {self._path}") from exc
        self._seed = rotated._seed
        self._public_key = rotated._public_key
        self._key_id = rotated._key_id
        self._retired = rotated._retired
        return self._key_id

    def _serialise(self) -> bytes:
        doc: dict[str, Any] = {
            "version": _FORMAT_VERSION,
            "active": {
                "seed": self._seed.hex(),
                "publicKey": self._public_key.hex(),
                "keyId": self._key_id,
            },
            "retired": [
                {"publicKey": r.public_key.hex(), "keyId": r.key_id} for r in self._retired
            ],
        }
        return (json.dumps(doc, sort_keys=True, indent=2) + "\n").encode("utf-8")


def _write_atomic(path: Path, data: bytes, *, exclusive: bool) -> None:
    """Write ``data`` to ``path`` with mode 0600 via a temporary file in the same dir.

    With ``exclusive`` the file is published with ``os.link`` (fails with
    FileExistsError if ``path`` exists); otherwise with ``os.replace``.
    """
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            # mkstemp already creates 0600; fchmod makes it explicit whatever the umask.
            os.fchmod(fh.fileno(), KEY_FILE_MODE)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if exclusive:
            os.link(tmp, path)
        else:
            os.replace(tmp, path)
        _fsync_dir(path.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _fsync_dir(directory: Path) -> None:
    """Persist the rename itself (POSIX needs the directory fsynced)."""
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(dir_fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(dir_fd)
