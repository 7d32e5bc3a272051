"""The managed local Neo4j: fetched from Maven Central, run without Docker.

``fetch`` resolves ``org.neo4j:neo4j`` at the configured version (5.26.30, the one
the suite is tested on, by default; a Maven range is accepted too) with Maven into a
cache folder outside any clone, once, reporting its downloads as they finish.
``start`` writes a loopback-only ``neo4j.conf``, launches
``org.neo4j.server.CommunityEntryPoint``, waits until a driver query succeeds and
records ``{pid, port, version}`` in a state file. ``stop`` sends SIGTERM and
waits; it escalates to SIGKILL only when the JVM ignores SIGTERM for too long.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from graphsvc.errors import (
    InvalidInputError,
    JavaMissingError,
    LauncherError,
    MavenMissingError,
    PortInUseError,
    StartTimeoutError,
)
from graphsvc.settings import Settings
from graphsvc.store.queries import query

__all__ = ["Instance", "LocalNeo4j", "population_buffer_mb", "start_all", "stop_all"]

# The Community server's main class: 5.x names it CommunityEntryPoint, 2026.x
# Neo4jCommunity; each release's neo4j jar names its own in a service file.
_ENTRY = "org.neo4j.server.CommunityEntryPoint"
_ENTRY_SERVICE = "META-INF/services/org.neo4j.server.startup.EntryPoint"
_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>graphsvc.local</groupId><artifactId>neo4j-runtime</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.neo4j</groupId><artifactId>neo4j</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
</project>
"""
_JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
]


# Written by graphsvc compact while it swaps store folders; start refuses meanwhile.
SWAP_JOURNAL = "compact-swap.json"

# See _write_conf: fewer, larger vector-index segments for faster reads.
VECTOR_MERGE_FACTOR = 4
# Lucene refuses a RAM buffer of 2048 MB or more.
_MAX_RAM_BUFFER_MB = 2047


def population_buffer_mb(heap: str) -> int:
    """The vector-index population buffer for a JVM heap such as ``"1g"``: a third
    of it (the population holds that much on the heap before it writes a segment).

    Raises:
        InvalidInputError: not a size Java's ``-Xmx`` takes (digits, then k/m/g).
    """
    m = re.fullmatch(r"(\d+)([kKmMgG]?)", heap.strip())
    if m is None:
        raise InvalidInputError(
            f"GRAPHSVC_NEO4J_HEAP must be a JVM size such as 1g or 512m, not {heap!r}"
        )
    scale = {"": 1 / 2**20, "k": 1 / 2**10, "m": 1, "g": 2**10}[m.group(2).lower()]
    return max(1, min(_MAX_RAM_BUFFER_MB, int(int(m.group(1)) * scale) // 3))


@dataclass(frozen=True)
class Instance:
    """A running managed Neo4j, as recorded in its state file."""

    name: str
    pid: int
    port: int
    version: str
    home: str
    auth: bool
    user: str
    password: str

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"


Progress = Callable[[str], None]


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class LocalNeo4j:
    """One named managed instance (``serve``, ``test``, ...) under the state dir.

    Args:
        settings: cache/state folders, heap, page cache, version range, timeout.
        name: instance name; each name has its own data folder.
        port: Bolt port; 0 picks a free one at start.
        auth: whether authentication is on (a generated password is kept 0600).
        progress: where progress lines go (stderr by default).
        extra_conf: more ``neo4j.conf`` lines (``graphsvc compact`` starts the
            instance read-only on a private port with these).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        name: str = "serve",
        port: int | None = None,
        auth: bool = True,
        progress: Progress = _stderr,
        extra_conf: tuple[str, ...] = (),
    ) -> None:
        self.settings = settings
        self.extra_conf = extra_conf
        self.name = name
        self.port = settings.neo4j.port if port is None else port
        self.auth = auth
        self.progress = progress
        self.home = settings.paths.state_dir / f"neo4j-{name}"
        self.state_file = self.home / "instance.json"
        self.lib_root = settings.paths.cache_dir / "neo4j"

    # ------------------------------------------------------------------ fetch
    def lib_dir(self) -> Path | None:
        """The cached jar folder for the configured range, or None if not fetched."""
        marker = self.lib_root / _slug(self.settings.neo4j.version_range) / "complete.json"
        if not marker.exists():
            return None
        return Path(json.loads(marker.read_text())["lib"])

    def fetch(self) -> tuple[Path, str]:
        """Make sure the Neo4j jars are in the cache; return (lib dir, version).

        Raises:
            MavenMissingError: Maven is not installed and nothing is cached.
            LauncherError: Maven could not resolve the artifact.
        """
        existing = self.lib_dir()
        if existing is not None and existing.is_dir():
            return existing, _version_of(existing)
        mvn = shutil.which("mvn")
        if mvn is None:
            raise MavenMissingError(
                "Maven (mvn) is needed once to fetch Neo4j from Maven Central; install it "
                "(e.g. apt-get install maven) or set GRAPHSVC_NEO4J_URI to an existing Neo4j"
            )
        slot = self.lib_root / _slug(self.settings.neo4j.version_range)
        slot.mkdir(parents=True, exist_ok=True)
        self.progress(
            f"graphsvc: fetching Neo4j {self.settings.neo4j.version_range} from Maven Central "
            f"into {slot} (once; ~130 MB)..."
        )
        with tempfile.TemporaryDirectory(dir=slot) as tmp:
            pom = Path(tmp) / "pom.xml"
            pom.write_text(_POM.format(version=self.settings.neo4j.version_range))
            out = Path(tmp) / "lib"
            cmd = [
                mvn,
                "-B",
                "-Dstyle.color=never",
                "-f",
                str(pom),
                "dependency:copy-dependencies",
                f"-DoutputDirectory={out}",
                "-DincludeScope=runtime",
            ]
            returncode, output = _run_with_progress(cmd, self.progress)
            if returncode != 0:
                raise LauncherError(
                    f"Maven could not fetch org.neo4j:neo4j:{self.settings.neo4j.version_range}",
                    details={"mavenOutput": output[-2000:]},
                )
            version = _version_of(out)
            final = slot / version
            if final.exists():
                shutil.rmtree(final)
            out.rename(final)
        (slot / "complete.json").write_text(json.dumps({"lib": str(final), "version": version}))
        self.progress(f"graphsvc: Neo4j {version} cached in {final}")
        return final, version

    # ------------------------------------------------------------------ status
    def status(self) -> Instance | None:
        """The running instance, or None (a stale state file is removed)."""
        if not self.state_file.exists():
            return None
        try:
            inst = Instance(**json.loads(self.state_file.read_text()))
        except (ValueError, TypeError):
            self.state_file.unlink(missing_ok=True)
            return None
        if not _is_our_jvm(inst.pid, inst.home):
            self.state_file.unlink(missing_ok=True)
            return None
        return inst

    # ------------------------------------------------------------------ start
    def start(self, *, die_with_parent: bool = False) -> Instance:
        """Start (or find already running) the instance and wait until it answers.

        :func:`start_all` starts several instances side by side.

        Args:
            die_with_parent: the JVM gets SIGTERM when this Python process dies
                (used by tests and ``serve`` so a crash never orphans a JVM).

        Raises:
            JavaMissingError: no ``java`` on PATH or in JAVA_HOME.
            PortInUseError: the Bolt port is taken by something else.
            StartTimeoutError: Neo4j did not answer a query in time (log tail attached).
        """
        launched = self._launch(die_with_parent)
        if isinstance(launched, Instance):
            return launched
        return self._await_start(*launched)

    def _launch(self, die_with_parent: bool) -> Instance | tuple[subprocess.Popen[bytes], Instance]:
        """The running instance, or the JVM just launched (not yet answering)."""
        running = self.status()
        if running is not None:
            self.progress(f"graphsvc: Neo4j '{self.name}' already running on {running.uri}")
            return running
        if (self.home / SWAP_JOURNAL).exists():
            # Started now, Neo4j would create an empty database where the store
            # being swapped in belongs (graphsvc/localdb/compact.py).
            raise LauncherError(
                f"an interrupted `graphsvc compact` left {self.home / SWAP_JOURNAL}; "
                "run `graphsvc compact` again to finish it before starting Neo4j"
            )
        java = _find_java(self.settings.paths.java_home)
        lib, version = self.fetch()
        port = self.port or _free_port()
        if not _port_free(port):
            raise PortInUseError(
                f"port {port} on 127.0.0.1 is in use by another process; "
                f"set GRAPHSVC_NEO4J_PORT to a free port",
                details={"port": port},
            )
        password = self._password() if self.auth else ""
        conf_dir = self._write_conf(port)
        log_path = self.home / "logs" / "console.log"
        cmd = [
            java,
            f"-Xms{self.settings.neo4j.heap}",
            f"-Xmx{self.settings.neo4j.heap}",
            *_JVM_FLAGS,
            *vector_api_flags(java),
            "-cp",
            f"{lib}/*",
            entry_point(lib, version),
            f"--home-dir={self.home}",
            f"--config-dir={conf_dir}",
            "--console-mode",
        ]
        self.progress(f"graphsvc: starting Neo4j {version} '{self.name}' on 127.0.0.1:{port}...")
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.home,
                start_new_session=True,
                preexec_fn=_pdeathsig if die_with_parent else None,
            )
        inst = Instance(
            name=self.name,
            pid=proc.pid,
            port=port,
            version=version,
            home=str(self.home),
            auth=self.auth,
            user="neo4j",
            password=password,
        )
        return proc, inst

    def _await_start(self, proc: subprocess.Popen[bytes], inst: Instance) -> Instance:
        try:
            self._wait_ready(proc, inst)
        except BaseException:
            _terminate(proc.pid, timeout=20)
            raise
        _write_private(self.state_file, json.dumps(asdict(inst)))
        self.progress(f"graphsvc: Neo4j ready on {inst.uri} (pid {inst.pid})")
        return inst

    # ------------------------------------------------------------------ stop
    def stop(self, timeout: float = 60.0) -> bool:
        """Stop the instance with SIGTERM; return whether one was running."""
        inst = self.status()
        if inst is None:
            return False
        self.progress(f"graphsvc: stopping Neo4j '{self.name}' (pid {inst.pid})...")
        _terminate(inst.pid, timeout=timeout)
        self.state_file.unlink(missing_ok=True)
        return True

    def _signal_stop(self) -> Instance | None:
        inst = self.status()
        if inst is not None:
            self.progress(f"graphsvc: stopping Neo4j '{self.name}' (pid {inst.pid})...")
            with contextlib.suppress(ProcessLookupError):
                os.kill(inst.pid, signal.SIGTERM)
        return inst

    # ------------------------------------------------------------------ internals
    def _password(self) -> str:
        pw_file = self.home / "password"
        if pw_file.exists():
            return pw_file.read_text().strip()
        self.home.mkdir(parents=True, exist_ok=True)
        pw = secrets.token_urlsafe(24)
        _write_private(pw_file, pw)
        return pw

    def _write_conf(self, port: int) -> Path:
        conf_dir = self.home / "conf"
        for sub in ("conf", "data", "logs", "run", "import", "plugins"):
            (self.home / sub).mkdir(parents=True, exist_ok=True)
        lines = [
            "server.default_listen_address=127.0.0.1",
            f"server.bolt.listen_address=127.0.0.1:{port}",
            "server.http.enabled=false",
            "server.https.enabled=false",
            f"dbms.security.auth_enabled={'true' if self.auth else 'false'}",
            "dbms.usage_report.enabled=false",
            f"server.directories.data={self.home / 'data'}",
            f"server.directories.logs={self.home / 'logs'}",
            f"server.directories.run={self.home / 'run'}",
            f"server.directories.import={self.home / 'import'}",
            f"server.directories.plugins={self.home / 'plugins'}",
            f"server.memory.pagecache.size={self.settings.neo4j.pagecache}",
            "db.tx_log.preallocate=false",
            # Small transaction logs keep the data folder small on test machines.
            "db.tx_log.rotation.retention_policy=2 files",
            # Lucene merges vector-index segments only when this many of a size have
            # piled up (Neo4j's default 50 favours write throughput). Every query
            # searches every segment's HNSW graph, so fewer segments make faster
            # queries (docs/performance.md#read-latency-vs-corpus-size, bench/read.py).
            # An internal setting of the 5.26 line the
            # launcher pins; a start with an unknown key fails loudly in CI.
            f"internal.dbms.index.vector.standard_merge_factor={VECTOR_MERGE_FACTOR}",
            # A vector index populated from existing data (created on a loaded
            # database, or `graphsvc index rebuild`) is flushed whenever this buffer
            # fills, and the population merges nothing: the default 1 MB leaves dozens
            # of segments, a third of the heap one (docs/performance.md, "Read latency
            # vs corpus size"); see graphsvc/ops/index.py.
            "internal.dbms.index.vector.population_ram_buffer_size="
            f"{population_buffer_mb(self.settings.neo4j.heap)}",
            *self.extra_conf,
        ]
        (conf_dir / "neo4j.conf").write_text("\n".join(lines) + "\n")
        return conf_dir

    def _wait_ready(self, proc: subprocess.Popen[bytes], inst: Instance) -> None:
        from neo4j import GraphDatabase
        from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable

        deadline = time.monotonic() + self.settings.neo4j.start_timeout_s
        last_err = ""
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise StartTimeoutError(
                    f"Neo4j exited during start-up (exit code {proc.returncode})",
                    details={"logTail": self._log_tail()},
                )
            try:
                auth = (inst.user, inst.password) if inst.auth else None
                with GraphDatabase.driver(inst.uri, auth=auth) as driver:
                    driver.verify_connectivity()
                    driver.execute_query(query("launcher/ping"), database_="neo4j", routing_="r")
                return
            except AuthError as exc:
                if inst.auth and _is_first_login(exc):
                    self._set_initial_password(inst)
                    continue
                if inst.auth and self._try_set_initial_password(inst):
                    continue
                last_err = str(exc)
            except (ServiceUnavailable, Neo4jError, OSError) as exc:
                last_err = str(exc)
            time.sleep(0.5)
        raise StartTimeoutError(
            f"Neo4j did not answer within {self.settings.neo4j.start_timeout_s:.0f}s "
            f"(last error: {last_err})",
            details={"logTail": self._log_tail()},
        )

    def _try_set_initial_password(self, inst: Instance) -> bool:
        try:
            self._set_initial_password(inst)
            return True
        except Exception:
            return False

    @staticmethod
    def _set_initial_password(inst: Instance) -> None:
        # A fresh database has user neo4j/neo4j with "change required"; the only
        # statement it may run is this one, against the system database.
        from neo4j import GraphDatabase

        with (
            GraphDatabase.driver(inst.uri, auth=("neo4j", "neo4j")) as driver,
            driver.session(database="system") as session,
        ):
            session.run(
                query("launcher/set_initial_password"),
                old="neo4j",
                new=inst.password,
            ).consume()

    def _log_tail(self, lines: int = 40) -> str:
        chunks = []
        for path in (self.home / "logs" / "console.log", self.home / "logs" / "neo4j.log"):
            if path.exists():
                text = path.read_text(errors="replace").splitlines()[-lines:]
                chunks.append(f"--- {path}\n" + "\n".join(text))
        return "\n".join(chunks)


def start_all(instances: list[LocalNeo4j], *, die_with_parent: bool = False) -> list[Instance]:
    """Start several instances side by side (their JVMs boot in parallel).

    Raises:
        LauncherError: as :meth:`LocalNeo4j.start`; the others started are stopped.
    """
    launched: list[tuple[LocalNeo4j, Instance | tuple[subprocess.Popen[bytes], Instance]]] = []
    try:
        for local in instances:
            launched.append((local, local._launch(die_with_parent)))
        return [
            got if isinstance(got, Instance) else local._await_start(*got)
            for local, got in launched
        ]
    except BaseException:
        for local, got in launched:
            if isinstance(got, tuple):
                _terminate(got[0].pid, timeout=20)
            local.stop()
        raise


def stop_all(instances: list[LocalNeo4j], timeout: float = 60.0) -> None:
    """Stop several instances side by side (SIGTERM to all, then wait for each)."""
    signalled = [(local, local._signal_stop()) for local in instances]
    for local, inst in signalled:
        if inst is not None:
            _terminate(inst.pid, timeout=timeout)
            local.state_file.unlink(missing_ok=True)


def _is_first_login(exc: Exception) -> bool:
    return "credentials" in str(exc).lower() or "password" in str(exc).lower()


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in ".-" else "_" for c in text)


# "[INFO] Downloaded from central: https://…/neo4j-kernel-5.26.30.jar (12 MB at 3.1 MB/s)"
_DOWNLOADED = re.compile(r"^(?:\[INFO\] )?Downloaded from \S+: \S+ \(([\d.]+) (B|kB|KB|MB|GB) at ")
_UNITS = {"B": 1, "kB": 1_000, "KB": 1_000, "MB": 1_000_000, "GB": 1_000_000_000}
_PROGRESS_EVERY_S = 5.0


def downloaded_bytes(line: str) -> int | None:
    """Bytes of one finished Maven transfer, from its log line (None: another line)."""
    m = _DOWNLOADED.match(line.strip())
    if m is None:
        return None
    return int(float(m.group(1)) * _UNITS[m.group(2)])


class FetchProgress:
    """Counts Maven's finished downloads; says how far the fetch is every few seconds.

    A cold fetch of Neo4j is ~130 MB in ~200 files and takes minutes; without a
    running count it looks like a hang.
    """

    def __init__(self, say: Callable[[str], None], clock: Callable[[], float]) -> None:
        self._say = say
        self._clock = clock
        self._last = clock()
        self.files = 0
        self.bytes = 0

    def line(self, text: str) -> None:
        size = downloaded_bytes(text)
        if size is None:
            return
        self.files += 1
        self.bytes += size
        now = self._clock()
        if now - self._last >= _PROGRESS_EVERY_S:
            self._last = now
            self._say(self.summary())

    def summary(self) -> str:
        return f"graphsvc: fetching Neo4j: {self.files} files, {self.bytes / 1e6:.1f} MB so far"


def _run_with_progress(cmd: list[str], say: Callable[[str], None]) -> tuple[int, str]:
    """Run Maven, reporting its downloads as they finish; (exit code, its output)."""
    progress = FetchProgress(say, time.monotonic)
    lines: list[str] = []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        assert proc.stdout is not None
        for text in proc.stdout:
            lines.append(text)
            progress.line(text)
        returncode = proc.wait()
    if progress.files:
        say(progress.summary().replace(" so far", ", done"))
    return returncode, "".join(lines)


def entry_point(lib: Path, version: str) -> str:
    """The main class of the Neo4j server in ``lib`` (from its jar's service file)."""
    jar = lib / f"neo4j-{version}.jar"
    try:
        with zipfile.ZipFile(jar) as archive:
            names = archive.read(_ENTRY_SERVICE).decode("utf-8").split()
    except (OSError, KeyError, zipfile.BadZipFile):
        return _ENTRY
    classes = [n for n in names if not n.startswith("#")]
    return classes[0] if classes else _ENTRY


def _version_of(lib: Path) -> str:
    for jar in sorted(lib.glob("neo4j-[0-9]*.jar")):
        return jar.stem.removeprefix("neo4j-")
    raise LauncherError(f"no neo4j-<version>.jar in {lib}")


def _find_java(home: str) -> str:
    """``<home>/bin/java`` (``settings.paths.java_home``), else ``java`` on PATH."""
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    java = shutil.which("java")
    if java is None:
        raise JavaMissingError(
            "Java 17 or 21 is needed to run Neo4j 5.26; install OpenJDK 17 or set JAVA_HOME"
        )
    return java


def java_major(java: str) -> int | None:
    """The feature release of the JDK that ``java`` belongs to (its ``release`` file's
    ``JAVA_VERSION``), None when it cannot be read."""
    release = Path(java).resolve().parent.parent / "release"
    try:
        text = release.read_text(encoding="utf-8")
    except OSError:
        return None
    found = re.search(r'^JAVA_VERSION="(\d+)', text, re.MULTILINE)
    return int(found.group(1)) if found else None


def vector_api_flags(java: str) -> list[str]:
    """``--add-modules=jdk.incubator.vector`` on Java 21 and later, else nothing.

    Lucene computes the vector index's HNSW distances with the JDK's vector API (SIMD)
    when that module is present on Java 21+, in scalar code otherwise; the HNSW
    insert is most of an import's Neo4j CPU (docs/performance.md#bulk-import). On
    Java 17 Lucene does not use the module, so it is not added there.
    """
    major = java_major(java)
    return ["--add-modules=jdk.incubator.vector"] if major is not None and major >= 21 else []


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _pdeathsig() -> None:
    # Linux: deliver SIGTERM to the JVM when the process that started it dies.
    import ctypes

    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    pr_set_pdeathsig = 1
    libc.prctl(pr_set_pdeathsig, signal.SIGTERM)


def _is_our_jvm(pid: int, home: str) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False
    return "org.neo4j.server." in cmdline and f"--home-dir={home}" in cmdline


def _terminate(pid: int, timeout: float) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    while _alive(pid):
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    # Reap our own child if it is one; otherwise look at /proc (zombies count as dead).
    with contextlib.suppress(ChildProcessError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.split(")")[-1].split()[0] != "Z"


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)
