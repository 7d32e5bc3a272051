"""Look for given strings in every file under a folder: the check behind erasure.

Two views of the same files (docs/erasure.md):

- **bytes**: each file is read in chunks and searched for each needle as UTF-8,
  UTF-16LE and UTF-16BE (Java and Lucene keep some strings as UTF-16);
- **Lucene**: every Lucene index folder (one holding a ``segments_N`` file) is
  read with Lucene itself (``java/LuceneTerms.java``, run with the Neo4j jars),
  which lists every term and stored string, deleted documents included. Lucene
  compresses its term blocks, so a purged word can sit in a segment where no
  byte scan sees it. Terms are analysed (lower-cased, maybe stemmed), so a term
  that is the needle less a short ending counts as found.

A byte scan cannot see strings Neo4j packs into a property record (texts of up
to about 20-40 characters, stored in 5-8 bits a character), so a clean scan is
evidence for longer strings and for the index; the erasure guarantee itself
comes from how ``graphsvc compact`` builds the new store (only live records are
copied). Reports name needles by their position in the list, never by text.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from graphsvc.errors import InvalidInputError, LauncherError

__all__ = ["ENCODINGS", "Hit", "ScanReport", "lucene_folders", "scan"]

ENCODINGS = ("utf-8", "utf-16-le", "utf-16-be")
_CHUNK = 8 * 1024 * 1024
_TERMS_JAVA = Path(__file__).with_name("java") / "LuceneTerms.java"


@dataclass(frozen=True)
class Hit:
    """One needle found in one file (or Lucene folder), in one representation."""

    path: str
    needle: int
    how: str  # one of ENCODINGS, or "lucene"


@dataclass
class ScanReport:
    """What a scan looked at and what it found."""

    root: str
    files: int = 0
    bytes: int = 0
    lucene_folders: int = 0
    hits: list[Hit] = field(default_factory=list)

    def found(self, needle: int) -> list[Hit]:
        """The hits of needle number ``needle``."""
        return [h for h in self.hits if h.needle == needle]

    def to_json(self) -> dict[str, object]:
        return {
            "root": self.root,
            "files": self.files,
            "bytes": self.bytes,
            "luceneFolders": self.lucene_folders,
            "hits": [{"path": h.path, "needle": h.needle, "how": h.how} for h in self.hits],
        }


def scan(
    root: Path,
    needles: Sequence[str],
    *,
    lucene_lib: Path | None = None,
    java: str | None = None,
) -> ScanReport:
    """Search every regular file under ``root`` for each needle.

    Args:
        root: the folder (a managed Neo4j home, a state folder).
        needles: the strings to look for (at least 4 characters each).
        lucene_lib: the Neo4j jar folder; when given, Lucene folders are read
            with Lucene too (needs ``java``).
        java: the java executable (found on PATH when None).

    Raises:
        InvalidInputError: no needles, or a needle shorter than 4 characters
            (it would match by chance).
        LauncherError: java is missing or the Lucene reader failed.
    """
    if not needles or any(len(n) < 4 for n in needles):
        raise InvalidInputError("scan needs needles of at least 4 characters each")
    patterns = [(i, enc, n.encode(enc)) for i, n in enumerate(needles) for enc in ENCODINGS]
    report = ScanReport(root=str(root))
    found: set[tuple[str, int, str]] = set()
    for path in _files(root):
        rel = str(path.relative_to(root))
        report.files += 1
        for chunk in _chunks(path, max(len(p) for _, _, p in patterns)):
            report.bytes += len(chunk[1])
            data = chunk[0] + chunk[1]
            for i, enc, pat in patterns:
                if (rel, i, enc) not in found and pat in data:
                    found.add((rel, i, enc))
                    report.hits.append(Hit(rel, i, enc))
    if lucene_lib is not None:
        folders = lucene_folders(root)
        report.lucene_folders = len(folders)
        if folders:
            report.hits.extend(_lucene_hits(root, folders, needles, lucene_lib, java))
    return report


def lucene_folders(root: Path) -> list[Path]:
    """Folders under ``root`` that hold a Lucene index (a ``segments_N`` file)."""
    return sorted({p.parent for p in root.rglob("segments_*") if p.is_file()})


def _stem_of(term: str, needle: str) -> bool:
    """Whether ``term`` can be ``needle`` after a stemmer cut its ending.

    An English analyzer indexes "confidential" as "confidenti": a needle counts
    as found when a term of at least 6 characters is a prefix of it that lacks
    at most 4 of its characters.
    """
    return len(term) >= max(6, len(needle) - 4) and needle.startswith(term)


def _files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            yield path


def _chunks(path: Path, longest: int) -> Iterator[tuple[bytes, bytes]]:
    """``(tail of the previous chunk, chunk)``: a needle across a boundary is seen."""
    tail = b""
    try:
        with path.open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                yield tail, chunk
                tail = chunk[-(longest - 1) :] if longest > 1 else b""
    except OSError:
        return  # a file that vanished while scanning (a live Neo4j) holds nothing now


def _lucene_hits(
    root: Path, folders: list[Path], needles: Sequence[str], lib: Path, java: str | None
) -> list[Hit]:
    exe = java or shutil.which("java")
    if exe is None:
        raise LauncherError("java is needed to read the Lucene indexes")
    proc = subprocess.run(
        [exe, "-cp", f"{lib}/*", str(_TERMS_JAVA), *map(str, folders)],
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        raise LauncherError(
            "the Lucene reader failed",
            details={"stderr": proc.stderr.decode(errors="replace")[-2000:]},
        )
    lowered = [n.lower() for n in needles]  # the analyzers lower-case every term
    hits: set[tuple[str, int]] = set()
    folder = ""
    for line in proc.stdout.decode("utf-8", errors="replace").splitlines():
        kind, _, value = line.partition("\t")
        if kind == "F":
            folder = str(Path(value).relative_to(root))
            continue
        value = value.lower()
        for i, needle in enumerate(lowered):
            if needle in value or (kind == "T" and _stem_of(value, needle)):
                hits.add((folder, i))
    return [Hit(path, i, "lucene") for path, i in sorted(hits)]
