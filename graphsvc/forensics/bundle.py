"""Write and verify forensic bundles (SIG-3) — deterministic tar files, no database.

Layout (all JSON is ``sort_keys``, compact separators, UTF-8, one trailing newline)::

    keys/<keyId>.pub.json           {"algorithm": "ed25519", "keyId", "publicKey": hex}
    lineage/<n:08d>.json            SignableLink fields + "signature" (n from 1)
    manifest.json                   caller's manifest + "format" + "files"
    manifest.sha256                 "<sha256 of manifest.json>  manifest.json\\n"
    revisions/<atomId>@<rev>.json   the stored revision
    signed-events/<seq:08d>.json    SignedEvent stored form (one subject's chain)

``manifest.json`` carries ``memories``: one envelope per touched memory
``{atomId, atomisedInto, archivedAt, atomIds, atomOf}``, and ``files``: the SHA-256 of
every member except ``manifest.json`` and ``manifest.sha256``.

Determinism. Members are written in sorted name order as plain USTAR regular files
with fixed headers (mtime 0, uid/gid 0, empty uname/gname, mode 0644), no directory
entries, no pax headers, no record padding beyond the two end-of-archive zero blocks,
and no compression, so the same inputs always give the same bytes. Lineage records
are ordered by their canonical CBOR bytes, so the caller's list order does not matter
either.

Why one flipped byte anywhere fails :func:`verify_bundle`. Every byte of a tar is in
one of three places, and each has its own check:

1. *Headers, header/content padding and the end-of-archive zero blocks.* A tar reader
   ignores most padding, so a flip there changes no member. The verifier therefore
   re-serialises the parsed members exactly as :func:`bundle_bytes` would and demands
   byte equality with the file: any flip outside member contents makes them differ
   (a flip in a header's checksum or size makes the tar unreadable or truncated, which
   fails the same way).
2. *Contents of every member but the manifest and its digest* — re-hashed against
   ``manifest.files``.
3. *Contents of ``manifest.json`` and ``manifest.sha256``* — they check each other.

On top of integrity, the verifier re-checks every lineage signature and the whole
signed-event chain (SIG-1, SIG-2) against the keys in ``keys/`` (or, when given,
against keys the auditor trusts). Integrity alone is not authenticity: the manifest is
not signed, so someone who rewrites a bundle consistently can change unsigned parts
(revisions, envelopes); only the signed lineage and events prove origin.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from graphsvc.core.canonical import canonical_cbor, sha256_hex
from graphsvc.core.signing import SignableLink, SignedEvent, key_id, verify_chain, verify_link
from graphsvc.errors import InvalidInputError, SignerError

__all__ = [
    "BUNDLE_FORMAT",
    "ENVELOPE_KEYS",
    "MANIFEST_DIGEST_NAME",
    "MANIFEST_NAME",
    "VerifyReport",
    "bundle_bytes",
    "verify_bundle",
    "verify_bundle_bytes",
    "write_bundle",
]

BUNDLE_FORMAT: Final = "graphsvc-forensic-bundle/1"
MANIFEST_NAME: Final = "manifest.json"
MANIFEST_DIGEST_NAME: Final = "manifest.sha256"
ENVELOPE_KEYS: Final = ("atomId", "atomisedInto", "archivedAt", "atomIds", "atomOf")

_KEYS_DIR = "keys/"
_LINEAGE_DIR = "lineage/"
_REVISIONS_DIR = "revisions/"
_EVENTS_DIR = "signed-events/"
_RESERVED_MANIFEST_KEYS = ("files", "format")
# Names become tar member paths; a strict alphabet keeps out "..", "/" and anything a
# tar tool or file system could misread.
_SAFE_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,79}")
_KEY_FILE = re.compile(r"keys/(?P<kid>[A-Za-z0-9][A-Za-z0-9._:-]{0,79})\.pub\.json")
_LINEAGE_FILE = re.compile(r"lineage/(?P<n>[0-9]{8})\.json")
_EVENT_FILE = re.compile(r"signed-events/(?P<seq>[0-9]{8})\.json")
_REVISION_FILE = re.compile(
    r"revisions/(?P<atom>[A-Za-z0-9][A-Za-z0-9._:-]{0,79})@(?P<rev>[1-9][0-9]*)\.json"
)


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """What :func:`verify_bundle` found.

    Attributes:
        ok: True only if no problem was found.
        problems: human-readable problems, in the order found.
        checked: counts of what was checked (members, hashed files, signatures, …).
    """

    ok: bool
    problems: list[str] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)


# =========================================================================== writing


def write_bundle(
    path: str | os.PathLike[str],
    *,
    manifest: Mapping[str, Any],
    revisions: Sequence[Mapping[str, Any]],
    events: Sequence[Mapping[str, Any]],
    public_keys: Mapping[str, str],
    lineage: Sequence[Mapping[str, Any]],
) -> None:
    """Write a forensic bundle tar to ``path`` atomically (temporary file + rename).

    The file is created with mode 0600: a bundle holds memory bodies.

    Args:
        path: destination file.
        manifest: JSON map with ``memories`` (list of envelopes with the keys
            ``atomId, atomisedInto, archivedAt, atomIds, atomOf``) and any other
            caller facts; ``files`` and ``format`` are added here and are reserved.
        revisions: stored revisions, each a JSON map with ``atomId`` and ``rev``.
        events: one subject's signed-event chain in stored form
            (:meth:`SignedEvent.to_dict`).
        public_keys: key id → 64-hex raw public key, for every key that signed.
        lineage: signed derives_from edges: SignableLink fields plus ``signature``.

    Raises:
        InvalidInputError: an input is malformed (see :func:`bundle_bytes`).
        OSError: the file cannot be written.
    """
    data = bundle_bytes(
        manifest=manifest,
        revisions=revisions,
        events=events,
        public_keys=public_keys,
        lineage=lineage,
    )
    target = Path(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def bundle_bytes(
    *,
    manifest: Mapping[str, Any],
    revisions: Sequence[Mapping[str, Any]],
    events: Sequence[Mapping[str, Any]],
    public_keys: Mapping[str, str],
    lineage: Sequence[Mapping[str, Any]],
) -> bytes:
    """Return the bytes :func:`write_bundle` writes (pure; same inputs → same bytes).

    Args:
        manifest: see :func:`write_bundle`.
        revisions: see :func:`write_bundle`.
        events: see :func:`write_bundle`.
        public_keys: see :func:`write_bundle`.
        lineage: see :func:`write_bundle`.

    Returns:
        The uncompressed tar.

    Raises:
        InvalidInputError: the manifest uses a reserved key or lacks valid envelopes;
            a revision lacks ``atomId``/``rev``; an event or lineage record does not
            parse; two members would share a name; a key id does not match its key;
            a value is not JSON-compatible.
    """
    files: dict[str, bytes] = {}

    def add(name: str, obj: object) -> None:
        if name in files:
            raise InvalidInputError(f"two bundle members would be named {name!r}")
        files[name] = _json_bytes(obj)

    for kid, pub_hex in public_keys.items():
        _check_public_key(kid, pub_hex)
        add(f"{_KEYS_DIR}{kid}.pub.json", _key_doc(kid, pub_hex))

    records = [_lineage_record(item) for item in lineage]
    records.sort(key=canonical_cbor)
    for n, record in enumerate(records, start=1):
        add(f"{_LINEAGE_DIR}{n:08d}.json", record)

    for revision in revisions:
        atom_id, rev = revision.get("atomId"), revision.get("rev")
        if not isinstance(atom_id, str) or not _SAFE_SEGMENT.fullmatch(atom_id):
            raise InvalidInputError("a revision needs a safe string atomId")
        if isinstance(rev, bool) or not isinstance(rev, int) or rev < 1:
            raise InvalidInputError(f"revision of {atom_id} needs an integer rev >= 1")
        add(f"{_REVISIONS_DIR}{atom_id}@{rev}.json", dict(revision))

    for event in events:
        parsed = SignedEvent.from_dict(event)
        add(f"{_EVENTS_DIR}{parsed.sequence:08d}.json", parsed.to_dict())

    for reserved in _RESERVED_MANIFEST_KEYS:
        if reserved in manifest:
            raise InvalidInputError(f"manifest key {reserved!r} is reserved for the bundle")
    envelope_problems = _envelope_problems(manifest.get("memories"))
    if envelope_problems:
        raise InvalidInputError("; ".join(envelope_problems))
    full_manifest = dict(manifest)
    full_manifest["format"] = BUNDLE_FORMAT
    full_manifest["files"] = {name: sha256_hex(data) for name, data in sorted(files.items())}
    manifest_data = _json_bytes(full_manifest)
    files[MANIFEST_NAME] = manifest_data
    files[MANIFEST_DIGEST_NAME] = _digest_line(manifest_data)
    return _tar_bytes(files)


def _json_bytes(obj: object) -> bytes:
    try:
        text = json.dumps(
            obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"bundle content is not JSON-compatible: {exc}") from exc
    return (text + "\n").encode("utf-8")


def _digest_line(manifest_data: bytes) -> bytes:
    # sha256sum's format, so `sha256sum -c manifest.sha256` works on an extracted bundle.
    return f"{sha256_hex(manifest_data)}  {MANIFEST_NAME}\n".encode("ascii")


def _key_doc(kid: str, pub_hex: str) -> dict[str, str]:
    return {"algorithm": "ed25519", "keyId": kid, "publicKey": pub_hex}


def _check_public_key(kid: str, pub_hex: object) -> bytes:
    if not isinstance(kid, str) or not _SAFE_SEGMENT.fullmatch(kid):
        raise InvalidInputError(f"unsafe key id {kid!r}")
    if not isinstance(pub_hex, str) or pub_hex != pub_hex.lower():
        raise InvalidInputError(f"public key of {kid} must be lowercase hex")
    try:
        raw = bytes.fromhex(pub_hex)
        actual = key_id(raw)
    except (ValueError, SignerError) as exc:
        raise InvalidInputError(f"public key of {kid} is not 32 bytes of hex") from exc
    if actual != kid:
        raise InvalidInputError(f"public key does not belong to key id {kid}")
    return raw


def _lineage_record(item: Mapping[str, Any]) -> dict[str, Any]:
    link = SignableLink.from_dict(item)
    signature = item.get("signature")
    if not isinstance(signature, str):
        raise InvalidInputError("a lineage record needs a hex signature")
    record = link.to_dict()
    record["signature"] = signature
    return record


def _tar_bytes(files: Mapping[str, bytes]) -> bytes:
    """Serialise members deterministically (the single definition both sides use).

    Each member is a USTAR header from :meth:`tarfile.TarInfo.tobuf`, its data, and
    zero padding to a 512-byte block; the archive ends with the two zero blocks of
    POSIX. The 10 KiB record padding tape drives wanted is left out: every tar
    reader accepts archives without it, and there are fewer meaningless bytes.
    """
    out = bytearray()
    for name in sorted(files):
        data = files[name]
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mtime = 0
        info.mode = 0o644
        info.uid = 0
        info.gid = 0
        info.uname = ""
        info.gname = ""
        info.type = tarfile.REGTYPE
        try:
            out += info.tobuf(tarfile.USTAR_FORMAT, "utf-8", "strict")
        except ValueError as exc:  # e.g. a name too long for USTAR
            raise InvalidInputError(f"cannot store bundle member {name!r}: {exc}") from exc
        out += data
        out += bytes(-len(data) % tarfile.BLOCKSIZE)
    out += bytes(2 * tarfile.BLOCKSIZE)
    return bytes(out)


# =========================================================================== verifying


def verify_bundle(
    path: str | os.PathLike[str], *, trusted_keys: Mapping[str, bytes] | None = None
) -> VerifyReport:
    """Verify a bundle file offline (no database). See the module docstring.

    Args:
        path: the bundle tar.
        trusted_keys: optional key id → raw public key the auditor trusts; when
            given, every key in the bundle must be one of them, byte for byte.

    Returns:
        The report; ``ok`` is False if anything at all is wrong, including an
        unreadable file.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        return VerifyReport(ok=False, problems=[f"cannot read bundle: {exc}"], checked={})
    return verify_bundle_bytes(raw, trusted_keys=trusted_keys)


def verify_bundle_bytes(
    raw: bytes, *, trusted_keys: Mapping[str, bytes] | None = None
) -> VerifyReport:
    """Verify a bundle given as bytes (see :func:`verify_bundle`).

    Args:
        raw: the bundle tar bytes.
        trusted_keys: see :func:`verify_bundle`.

    Returns:
        The report.
    """
    return _Verifier(raw, trusted_keys).run()


class _Verifier:
    def __init__(self, raw: bytes, trusted_keys: Mapping[str, bytes] | None) -> None:
        self.raw = raw
        self.trusted_keys = trusted_keys
        self.problems: list[str] = []
        self.checked: dict[str, int] = {
            "members": 0,
            "hashedFiles": 0,
            "keys": 0,
            "lineageSignatures": 0,
            "events": 0,
            "revisions": 0,
            "memories": 0,
        }
        self.files: dict[str, bytes] = {}
        self.keys: dict[str, bytes] = {}
        self.revision_refs: set[tuple[str, int]] = set()

    def report(self) -> VerifyReport:
        return VerifyReport(ok=not self.problems, problems=self.problems, checked=self.checked)

    def run(self) -> VerifyReport:
        if not self._read_members():
            return self.report()
        if _tar_bytes(self.files) != self.raw:
            self.problems.append(
                "tar bytes differ from the deterministic serialisation of its members "
                "(a header, padding or end-of-archive byte was altered)"
            )
        manifest = self._check_manifest()
        self._check_keys()
        self._check_revisions()
        lineage_subjects = self._check_lineage()
        event_subjects = self._check_events()
        if len(lineage_subjects | event_subjects) > 1:
            self.problems.append(
                f"bundle mixes subjects: {sorted(lineage_subjects | event_subjects)}"
            )
        if manifest is not None:
            envelopes = manifest.get("memories")
            self.problems.extend(_envelope_problems(envelopes))
            if isinstance(envelopes, list):
                self.checked["memories"] = len(envelopes)
        return self.report()

    # ------------------------------------------------------------------ tar

    def _read_members(self) -> bool:
        try:
            # "r:" = plain tar only; auto-detecting compression would let another
            # byte stream stand in for the deterministic one.
            with tarfile.open(fileobj=io.BytesIO(self.raw), mode="r:") as tar:
                for member in tar.getmembers():
                    self.checked["members"] += 1
                    if not member.isreg():
                        self.problems.append(f"member {member.name!r} is not a regular file")
                        continue
                    if member.name in self.files:
                        self.problems.append(f"member {member.name!r} appears twice")
                        continue
                    fh = tar.extractfile(member)
                    if fh is None:  # pragma: no cover - isreg() members always have data
                        self.problems.append(f"member {member.name!r} has no data")
                        continue
                    self.files[member.name] = fh.read()
        except (tarfile.TarError, OSError, EOFError, ValueError, UnicodeError) as exc:
            self.problems.append(f"not a readable tar archive: {exc}")
            return False
        if not self.files:
            self.problems.append("bundle has no members")
            return False
        return True

    # ------------------------------------------------------------------ manifest

    def _check_manifest(self) -> dict[str, Any] | None:
        manifest_data = self.files.get(MANIFEST_NAME)
        if manifest_data is None:
            self.problems.append(f"missing {MANIFEST_NAME}")
            return None
        digest_data = self.files.get(MANIFEST_DIGEST_NAME)
        if digest_data is None:
            self.problems.append(f"missing {MANIFEST_DIGEST_NAME}")
        elif digest_data != _digest_line(manifest_data):
            self.problems.append(f"{MANIFEST_NAME} does not match {MANIFEST_DIGEST_NAME}")
        manifest = self._json(MANIFEST_NAME)
        if not isinstance(manifest, dict):
            self.problems.append(f"{MANIFEST_NAME} is not a JSON object")
            return None
        if manifest.get("format") != BUNDLE_FORMAT:
            self.problems.append(f"unknown bundle format {manifest.get('format')!r}")
        listed = manifest.get("files")
        if not isinstance(listed, dict):
            self.problems.append(f"{MANIFEST_NAME} has no 'files' map")
            return manifest
        present = set(self.files) - {MANIFEST_NAME, MANIFEST_DIGEST_NAME}
        for name in sorted(set(listed) - present):
            self.problems.append(f"missing file listed in manifest: {name}")
        for name in sorted(present - set(listed)):
            self.problems.append(f"extra file not listed in manifest: {name}")
        for name in sorted(present & set(listed)):
            self.checked["hashedFiles"] += 1
            if listed[name] != sha256_hex(self.files[name]):
                self.problems.append(f"hash mismatch: {name}")
        return manifest

    def _json(self, name: str) -> Any:
        try:
            return json.loads(self.files[name].decode("utf-8"), parse_constant=_reject_constant)
        except (UnicodeDecodeError, ValueError) as exc:
            self.problems.append(f"{name} is not valid UTF-8 JSON: {exc}")
            return None

    # ------------------------------------------------------------------ members

    def _names(self, prefix: str) -> list[str]:
        return sorted(n for n in self.files if n.startswith(prefix))

    def _check_keys(self) -> None:
        for name in self._names(_KEYS_DIR):
            match = _KEY_FILE.fullmatch(name)
            doc = self._json(name)
            if match is None or not isinstance(doc, dict):
                self.problems.append(f"malformed key file {name}")
                continue
            kid = match["kid"]
            try:
                if doc.get("keyId") != kid or doc.get("algorithm") != "ed25519":
                    raise InvalidInputError("keyId or algorithm does not match")
                raw = _check_public_key(kid, doc.get("publicKey"))
            except InvalidInputError as exc:
                self.problems.append(f"bad key file {name}: {exc.message}")
                continue
            if self.trusted_keys is not None and self.trusted_keys.get(kid) != raw:
                self.problems.append(f"key {kid} is not one of the trusted keys")
                continue
            self.keys[kid] = raw
            self.checked["keys"] += 1

    def _check_revisions(self) -> None:
        for name in self._names(_REVISIONS_DIR):
            match = _REVISION_FILE.fullmatch(name)
            doc = self._json(name)
            if match is None or not isinstance(doc, dict):
                self.problems.append(f"malformed revision file {name}")
                continue
            ref = (str(match["atom"]), int(match["rev"]))
            if (doc.get("atomId"), doc.get("rev")) != ref:
                self.problems.append(f"{name}: atomId/rev inside differ from the file name")
                continue
            self.revision_refs.add(ref)
            self.checked["revisions"] += 1

    def _check_lineage(self) -> set[str]:
        subjects: set[str] = set()
        names = self._names(_LINEAGE_DIR)
        for n, name in enumerate(names, start=1):
            match = _LINEAGE_FILE.fullmatch(name)
            doc = self._json(name)
            if match is None or not isinstance(doc, dict):
                self.problems.append(f"malformed lineage file {name}")
                continue
            if int(match["n"]) != n:
                self.problems.append(f"{name}: lineage files are not numbered 1..{len(names)}")
            try:
                link = SignableLink.from_dict(doc)
            except InvalidInputError as exc:
                self.problems.append(f"{name}: {exc.message}")
                continue
            subjects.add(link.subject)
            public_key = self.keys.get(link.key_id)
            signature = doc.get("signature")
            if public_key is None:
                self.problems.append(f"{name}: signed by unknown key {link.key_id}")
            elif not isinstance(signature, str) or not verify_link(public_key, link, signature):
                self.problems.append(f"{name}: bad signature")
            else:
                self.checked["lineageSignatures"] += 1
            for ref in ((link.from_atom_id, link.from_rev), (link.to_atom_id, link.to_rev)):
                if ref not in self.revision_refs:
                    self.problems.append(f"{name}: revision {ref[0]}@{ref[1]} is not in the bundle")
        return subjects

    def _check_events(self) -> set[str]:
        events: list[SignedEvent] = []
        for name in self._names(_EVENTS_DIR):
            match = _EVENT_FILE.fullmatch(name)
            doc = self._json(name)
            if match is None or not isinstance(doc, dict):
                self.problems.append(f"malformed event file {name}")
                continue
            try:
                event = SignedEvent.from_dict(doc)
            except InvalidInputError as exc:
                self.problems.append(f"{name}: {exc.message}")
                continue
            if event.sequence != int(match["seq"]):
                self.problems.append(f"{name}: sequence inside differs from the file name")
            events.append(event)
        self.problems.extend(verify_chain(events, self.keys))
        self.checked["events"] = len(events)
        return {e.subject for e in events}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"JSON constant {name} is not allowed")


def _envelope_problems(envelopes: object) -> list[str]:
    if not isinstance(envelopes, list):
        return ["manifest 'memories' must be a list of envelopes"]
    problems: list[str] = []
    for i, env in enumerate(envelopes):
        if not isinstance(env, Mapping):
            problems.append(f"manifest memories[{i}] is not an object")
            continue
        missing = [k for k in ENVELOPE_KEYS if k not in env]
        if missing:
            problems.append(f"manifest memories[{i}] lacks {missing}")
            continue
        if not isinstance(env["atomId"], str) or not env["atomId"]:
            problems.append(f"manifest memories[{i}].atomId must be a non-empty string")
        into = env["atomisedInto"]
        if into is not None and (isinstance(into, bool) or not isinstance(into, int) or into < 0):
            problems.append(f"manifest memories[{i}].atomisedInto must be null or an int >= 0")
        if env["archivedAt"] is not None and not isinstance(env["archivedAt"], str):
            problems.append(f"manifest memories[{i}].archivedAt must be null or a string")
        ids = env["atomIds"]
        if not isinstance(ids, list) or not all(isinstance(x, str) for x in ids):
            problems.append(f"manifest memories[{i}].atomIds must be a list of strings")
        if env["atomOf"] is not None and not isinstance(env["atomOf"], str):
            problems.append(f"manifest memories[{i}].atomOf must be null or a string")
    return problems
