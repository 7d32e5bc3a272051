"""Architecture rules that are cheap to check and easy to break (STYLE rules 1-2).

The store boundary (issue 15): only graphsvc/store imports neo4j or runs a query;
every query name in code is a file under cypher/ and every file is used; no
query text is built from strings; use cases never import the facade; Settings is
the only reader of the environment; the layers' import graph has no back edge
(``python -m graphsvc.devtools imports``); only the composition root builds key
rings, connections and the embedder's wrappers. Rules with a PENDING set fail on a new
offender *and* on a PENDING entry that no longer offends, so the sets only shrink.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from graphsvc import devtools

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "graphsvc" / "core"
# The core may take a settings section as the value it is (the ranking's knobs are
# declared once, in graphsvc.settings); only settings.py reads the environment.
ALLOWED_GRAPHSVC = {"graphsvc.core", "graphsvc.errors", "graphsvc.settings"}
FORBIDDEN_THIRD_PARTY = {"neo4j", "strawberry", "starlette", "uvicorn", "httpx", "torch"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_core_imports_no_adapter_and_no_io_library() -> None:
    offenders = []
    for path in sorted(CORE.glob("*.py")):
        for name in _imports(path):
            top = name.split(".")[0]
            if top in FORBIDDEN_THIRD_PARTY:
                offenders.append(f"{path.name}: {name}")
            if name.startswith("graphsvc") and not any(
                name == a or name.startswith(a + ".") for a in ALLOWED_GRAPHSVC
            ):
                offenders.append(f"{path.name}: {name}")
    assert offenders == []


def test_core_reads_no_clock() -> None:
    clock = re.compile(r"\b(time\.time|datetime\.now|datetime\.utcnow|time\.monotonic)\(")
    offenders = [p.name for p in CORE.glob("*.py") if clock.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_every_cypher_file_is_one_statement() -> None:
    for path in (ROOT / "cypher").rglob("*.cypher"):
        body = "\n".join(
            line for line in path.read_text().splitlines() if not line.strip().startswith("//")
        ).strip()
        assert body, path
        assert ";" not in body.rstrip(";"), f"{path} holds more than one statement"


@pytest.mark.req("CORE-3")
def test_core_and_operations_run_no_model_loop_or_scheduler() -> None:
    # CORE-3: no automatic read, model loop or scheduler in the core. Background
    # work and model calls live only in the host layer (graphsvc/atomise).
    forbidden = {"threading", "sched", "asyncio", "concurrent", "httpx", "graphsvc.atomise"}
    # The one exception: a request may run independent reads and writes of its own
    # side by side (Database.soon / read_soon, awaited in ops/evaluate,
    # ops/acquisition and ops/read); the one write that may end just after the
    # answer is the frozen evaluation behind the request's own cursor (auxiliary
    # state, CORE-2; ops/cursors.Pager.save_later). Nothing is scheduled.
    request_scoped = {
        ("store", "connection.py"): {"concurrent.futures"},
        ("ops", "evaluate.py"): {"concurrent.futures"},
        ("ops", "acquisition.py"): {"concurrent.futures"},
        ("ops", "read.py"): {"concurrent.futures"},
        ("ops", "cursors.py"): {"concurrent.futures"},
        # ... and a lock around a queue of those writes (group commit: frozen
        # evaluations, reads' manifests), drained on Database.soon's pool when a write
        # finds no drain running: it starts no thread of its own. A read waits for its
        # manifest's batch before it answers.
        ("store", "group_commit.py"): {"concurrent.futures", "threading"},
        ("store", "manifests.py"): {"concurrent.futures"},
        # Locks a write transaction waits on before numbering its change, given back
        # when it ends; it starts no thread.
        ("store", "sequence_gate.py"): {"threading"},
        # A lock around the process's cache of term statistics; it starts no thread.
        ("process_state", "term_statistics.py"): {"threading"},
        # Locks around the process's mirrors of subjects' heads and its kept usage
        # states; it starts no thread.
        ("process_state", "head_mirrors.py"): {"threading"},
    }
    offenders = []
    for folder in ("core", "ops", "store", "process_state"):
        for path in sorted((ROOT / "graphsvc" / folder).glob("*.py")):
            allowed = request_scoped.get((folder, path.name), set())
            for name in _imports(path) - allowed:
                if any(name == f or name.startswith(f + ".") for f in forbidden):
                    offenders.append(f"{folder}/{path.name}: {name}")
    assert offenders == []
    assert not any(folder == "core" for folder, _ in request_scoped)


# ====================================================== the store boundary (issue 15)
#
# PENDING: known offenders a rule tolerates for a while (each entry must still
# offend, so the sets only shrink). All are empty since the issue-15 merge: any
# offender is a failure.

PKG = ROOT / "graphsvc"
CYPHER = ROOT / "cypher"
MODULES = devtools.modules(PKG)
KNOWN = set(MODULES)
STORE = ("graphsvc.store", "graphsvc.localdb")  # localdb: the launcher's own queries

NEO4J_PENDING: set[str] = set()
SERVICE_PENDING: set[str] = set()
# Modules outside graphsvc/store (and the launcher) that load or run a named query.
QUERY_RUNNER_PENDING: set[str] = set()
# The purge kill switch is gone (a test-only step hook, ops.purge.install_step_hook).
ENV_PENDING: set[str] = set()
# Edges (cli/, api/, mcp_api/) that reach a use case or the store past the facades
# (graphsvc.service for the caller's operations, graphsvc.admin for the operator's);
# the result types they show come from graphsvc.core or are re-exported by the facade.
EDGE_PENDING: set[str] = set()
# (importing module, imported module) of today's back edges: use cases -> facade.
BACK_EDGE_PENDING = {(m, "graphsvc.service") for m in SERVICE_PENDING}


def _check_pending(offenders: set[str], pending: set[str]) -> None:
    new = sorted(offenders - pending)
    fixed = sorted(pending - offenders)
    assert new == [], f"new offenders: {new}"
    assert fixed == [], f"no longer offending, remove them from PENDING: {fixed}"


def _in(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


@cache
def _tree(module: str) -> ast.Module:
    return ast.parse(MODULES[module].read_text(encoding="utf-8"), filename=str(MODULES[module]))


def _imported_modules(module: str) -> set[str]:
    """Every module ``module`` imports (third-party ones too), as dotted names."""
    names: set[str] = set()
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    names.update(i.target for i in devtools.imports_of(module, MODULES[module], KNOWN))
    return names


def test_only_the_store_and_the_launcher_import_neo4j() -> None:
    offenders = {
        m
        for m in MODULES
        if not _in(m, "graphsvc.store", "graphsvc.localdb")
        and any(_in(n, "neo4j") for n in _imported_modules(m))
    }
    _check_pending(offenders, NEO4J_PENDING)


def test_use_cases_and_the_store_never_import_the_facade() -> None:
    lower = ("graphsvc.ops", "graphsvc.atomise", "graphsvc.forensics", "graphsvc.store")
    offenders = {
        m
        for m in MODULES
        if _in(m, *lower) and any(_in(n, "graphsvc.service") for n in _imported_modules(m))
    }
    _check_pending(offenders, SERVICE_PENDING)


def _reads_environment(tree: ast.AST) -> bool:
    env = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in env
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
        ):
            return True
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "os"
            and any(a.name in env for a in node.names)
        ):
            return True
    return False


def test_the_edges_call_only_the_facades() -> None:
    edges = ("graphsvc.cli", "graphsvc.api", "graphsvc.mcp_api", "graphsvc.http")
    inner = (
        "graphsvc.ops",
        "graphsvc.atomise",
        "graphsvc.forensics",
        "graphsvc.store",
        "graphsvc.bulk",
    )
    offenders = {
        m for m in MODULES if _in(m, *edges) and any(_in(n, *inner) for n in _imported_modules(m))
    }
    _check_pending(offenders, EDGE_PENDING)


# The facades delegate: the use cases they call do the orchestration and reach the
# store; a facade names the connection's type through graphsvc.ops.
FACADES = ("graphsvc.service", "graphsvc.admin")


def _facade_store_imports(root: Path) -> set[str]:
    """``facade -> store module`` for every import of ``graphsvc.store`` in a facade,
    deferred and type-only ones included."""
    mods = devtools.modules(root)
    return {
        f"{imp.source} -> {imp.target}"
        for facade in FACADES
        if facade in mods
        for imp in devtools.imports_of(facade, mods[facade], set(mods))
        if _in(imp.target, "graphsvc.store")
    }


def test_the_facades_never_import_the_store() -> None:
    assert _facade_store_imports(PKG) == set()


def test_a_facade_importing_the_store_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "graphsvc"
    (pkg / "store").mkdir(parents=True)
    (pkg / "ops").mkdir()
    (pkg / "store" / "__init__.py").write_text("")
    (pkg / "store" / "jobs.py").write_text("def counts(): ...\n")
    (pkg / "store" / "meta.py").write_text("class Readiness: ...\n")
    (pkg / "ops" / "jobs.py").write_text("from graphsvc.store import jobs\n")
    (pkg / "service.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from graphsvc.ops.jobs import x\n"
        "if TYPE_CHECKING:\n    from .store.meta import Readiness\n"
        "def f():\n    from graphsvc.store import jobs\n"
    )
    (pkg / "admin.py").write_text("import graphsvc.ops.jobs\n")
    assert _facade_store_imports(pkg) == {
        "graphsvc.service -> graphsvc.store.meta",
        "graphsvc.service -> graphsvc.store.jobs",
    }


def test_settings_is_the_only_reader_of_the_environment() -> None:
    assert _reads_environment(ast.parse("import os\nx = os.environ.get('A')"))
    assert _reads_environment(ast.parse("from os import getenv"))
    offenders = {m for m in MODULES if m != "graphsvc.settings" and _reads_environment(_tree(m))}
    _check_pending(offenders, ENV_PENDING)


# ------------------------------------------------------------------ settings
#
# Every field of a settings section is read somewhere outside settings.py: as
# ``<x>.<section>.<field>`` (``settings.neo4j.uri``), or as ``.<field>`` on what a
# section was handed to whole (``settings.graphql`` passed to the graph reader, or to
# ``fill`` for a limits dataclass of the same field names), or by a property of its
# section (``secret_path`` reads ``secret_file``) that is read so. A field nothing
# reads is a knob that turns nothing: remove it (and its README row). Fields read in
# another way (say, by name only) would go here, as ``section.field``, with a reason.
SETTINGS_READ_OTHERWISE: dict[str, str] = {}
PROPERTY_DECORATORS = {"property", "functools.cached_property", "cached_property"}


def _unread_settings(settings: ast.Module, others: list[ast.Module]) -> list[str]:
    """``section.field`` of the sections of the ``Settings`` class of ``settings``
    that ``others`` never read."""
    classes = {n.name: n for n in settings.body if isinstance(n, ast.ClassDef)}

    def fields(cls: ast.ClassDef) -> list[str]:
        return [
            n.target.id
            for n in cls.body
            if isinstance(n, ast.AnnAssign)
            and isinstance(n.target, ast.Name)
            and not ast.unparse(n.annotation).startswith("ClassVar")
        ]

    def properties(cls: ast.ClassDef) -> dict[str, set[str]]:
        return {
            f.name: {
                a.attr
                for a in ast.walk(f)
                if isinstance(a, ast.Attribute)
                and isinstance(a.value, ast.Name)
                and a.value.id == "self"
            }
            for f in cls.body
            if isinstance(f, ast.FunctionDef)
            and any(ast.unparse(d) in PROPERTY_DECORATORS for d in f.decorator_list)
        }

    root = classes["Settings"]
    sections = {
        n.target.id: classes[ast.unparse(n.annotation)]
        for n in root.body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
    }
    attributes = [n for tree in others for n in ast.walk(tree) if isinstance(n, ast.Attribute)]
    plain = {n.attr for n in attributes}
    qualified = {(n.value.attr, n.attr) for n in attributes if isinstance(n.value, ast.Attribute)}
    # A section is handed away whole where ``.<section>`` is not followed by one of
    # its own fields or properties.
    inner = {id(n.value) for n in attributes if isinstance(n.value, ast.Attribute)}
    whole = {
        n.attr
        for n in attributes
        if n.attr in sections
        and (
            id(n) not in inner
            or not any(
                (n.attr, name) in qualified
                for name in [*fields(sections[n.attr]), *properties(sections[n.attr])]
            )
        )
    }
    unread = []
    for name, cls in sections.items():
        read = {f for s, f in qualified if s == name}
        if name in whole:
            read |= plain
        for prop, uses in properties(cls).items():
            if prop in read:
                read |= uses
        unread += [f"{name}.{f}" for f in fields(cls) if f not in read]
    return unread


def test_the_unread_settings_check_finds_a_field_nothing_reads() -> None:
    settings = ast.parse(
        "class Paths(Section):\n"
        "    prefix: ClassVar[str] = ''\n"
        "    used: int = 1\n"
        "    dead: int = 2\n"
        "    behind: str = ''\n"
        "    behind_unused: str = ''\n"
        "    @property\n"
        "    def path(self):\n"
        "        return self.behind\n"
        "    @property\n"
        "    def other(self):\n"
        "        return self.behind_unused\n"
        "    def check(self):\n"
        "        assert self.dead > 0\n"
        "class Limits(Section):\n"
        "    taken: int = 1\n"
        "    left: int = 2\n"
        "class Settings:\n"
        "    paths: Paths\n"
        "    limits: Limits\n"
    )
    # ``.dead`` elsewhere reads no field of a section that is never handed away whole.
    user = ast.parse(
        "def f(settings, other):\n"
        "    return settings.paths.path, settings.paths.used, other.dead\n"
        "def g(settings):\n"
        "    return fill(Projection, settings.limits).taken\n"
    )
    assert _unread_settings(settings, [user]) == [
        "paths.dead",
        "paths.behind_unused",
        "limits.left",
    ]


def test_every_setting_is_read_somewhere() -> None:
    others = [_tree(m) for m in MODULES if m != "graphsvc.settings"]
    unread = set(_unread_settings(_tree("graphsvc.settings"), others))
    assert sorted(unread - set(SETTINGS_READ_OTHERWISE)) == [], "remove unread settings"
    stale = sorted(set(SETTINGS_READ_OTHERWISE) - unread)
    assert stale == [], f"read as .field now, remove them from SETTINGS_READ_OTHERWISE: {stale}"


# ------------------------------------------------------------------ named queries
#
# Calls that take a query *name*: query(name), connection.run(tx, name) and the
# private _run(tx, name) copies, and Database.read/write/read_rows/read_soon(name).
# Calls that take query *text*: <x>.run(text), <x>.execute_query(text), Query(text).

QUERY_NAME = re.compile(r"[a-z0-9_]+(?:/[a-z0-9_]+)+")
FOLDERS = {p.name for p in CYPHER.iterdir() if p.is_dir()}
FILES = {p.relative_to(CYPHER).with_suffix("").as_posix() for p in CYPHER.rglob("*.cypher")}
BUILDERS = {"format", "format_map", "join", "replace"}


def _receiver(node: ast.expr) -> str:
    return ast.unparse(node)


def _name_arg(call: ast.Call, module: str) -> ast.expr | None:
    """The query-name argument of a call that takes one, else None."""
    f = call.func
    if isinstance(f, ast.Name) and f.id == "query" and call.args:
        return call.args[0]
    if isinstance(f, ast.Name) and f.id in {"run", "_run"} and len(call.args) >= 2:
        return call.args[1]
    if isinstance(f, ast.Attribute):
        recv = _receiver(f.value)
        if f.attr == "query" and recv.endswith("queries") and call.args:
            return call.args[0]
        if f.attr == "run" and recv.endswith("connection") and len(call.args) >= 2:
            return call.args[1]
        on_db = recv.endswith("db") or (recv == "self" and module == "graphsvc.store.connection")
        if f.attr in {"read", "write", "read_rows", "read_soon"} and on_db and call.args:
            return call.args[0]
    return None


def _text_arg(call: ast.Call) -> ast.expr | None:
    """The query-text argument of a call that sends Cypher text, else None."""
    f = call.func
    if isinstance(f, ast.Attribute) and f.attr in {"run", "execute_query"} and call.args:
        if f.attr == "run" and _receiver(f.value).endswith("connection"):
            return None  # connection.run(tx, name): a name, not text
        return call.args[0]
    if isinstance(f, ast.Name | ast.Attribute) and _receiver(f).split(".")[-1] == "Query":
        return call.args[0] if call.args else None
    return None


def _scopes(tree: ast.AST) -> Iterator[tuple[ast.AST, dict[str, list[ast.expr]]]]:
    """Each function (and the module) with what its names are assigned."""
    for scope in ast.walk(tree):
        if not isinstance(scope, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        bound: dict[str, list[ast.expr]] = {}
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        bound.setdefault(target.id, []).append(node.value)
            elif (
                isinstance(node, ast.AnnAssign | ast.AugAssign)
                and node.value is not None
                and isinstance(node.target, ast.Name)
            ):
                value = node.value
                if isinstance(node, ast.AugAssign):  # x += ...: x is built
                    value = ast.BinOp(node.target, node.op, node.value)
                bound.setdefault(node.target.id, []).append(value)
        yield scope, bound


def _built(expr: ast.expr, bound: dict[str, list[ast.expr]], *, text: bool, depth: int = 0) -> bool:
    """Whether ``expr`` is (or names) a string made at run time.

    For a text argument a plain string literal counts too: Cypher belongs in a file.
    """
    if depth > 5:
        return False
    if isinstance(expr, ast.JoinedStr):
        return True
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Mod):
        return True
    if isinstance(expr, ast.Call):
        f = expr.func
        if isinstance(f, ast.Attribute) and f.attr in BUILDERS:
            return True
        if isinstance(f, ast.Name) and f.id == "str":
            return True
        if isinstance(f, ast.Name | ast.Attribute) and _receiver(f).split(".")[-1] == "Query":
            return bool(expr.args) and _built(expr.args[0], bound, text=text, depth=depth + 1)
        return False
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return text
    if isinstance(expr, ast.Name):
        return any(_built(v, bound, text=text, depth=depth + 1) for v in bound.get(expr.id, []))
    return False


def _violations(tree: ast.AST, module: str) -> list[str]:
    """Query names or texts built from strings (or Cypher text written in code)."""
    found = []
    for scope, bound in _scopes(tree):
        body = scope.body if not isinstance(scope, ast.Module) else []
        nodes = (n for stmt in body for n in ast.walk(stmt)) if body else ast.walk(scope)
        for node in nodes:
            if not isinstance(node, ast.Call):
                continue
            name = _name_arg(node, module)
            if name is not None and _built(name, bound, text=False):
                found.append(f"{module}:{node.lineno}: query name {ast.unparse(name)}")
            text = _text_arg(node)
            if text is not None and _built(text, bound, text=True):
                found.append(f"{module}:{node.lineno}: query text {ast.unparse(text)}")
    return sorted(set(found))


BUILT_FROM_STRINGS = {
    "f-string text": 'def f(tx, x):\n    tx.run(f"MATCH (n {{id: {x}}}) RETURN n")',
    "concatenated text": 'def f(tx, x):\n    tx.run("MATCH (n) " + x)',
    "text bound to a %-format": "def f(tx, x):\n    t = 'MATCH (n {id: %s})' % x\n    tx.run(t)",
    "text grown with +=": 'def f(tx, x):\n    t = query("read/a")\n    t += x\n    tx.run(t)',
    "str.format text": 'def f(db, x):\n    db.driver.execute_query("MATCH (n:{})".format(x))',
    "Cypher written in code": 'def f(s):\n    s.run("MATCH (n) RETURN n")',
    "Query of an f-string": 'def f(x):\n    return Query(f"RETURN {x}")',
    "built name for db.read": 'def f(db, kind):\n    return db.read(f"index/{kind}_state")',
    "built name for run": 'def f(tx, k):\n    return run(tx, "purge/" + k)',
    "built name for query": 'def f(k):\n    return query("read/%s" % k)',
    "joined name": 'def f(k):\n    name = "/".join(["read", k])\n    return query(name)',
}
NOT_BUILT = """
def f(tx, db, name, kind):
    text = query("read/x")
    tx.run(text, a=1)
    tx.run(query(name), {"a": 1})
    tx.run(Query(query(name), timeout=1.0))
    db.read(name)
    db.write(kind.mark, since="now")
    run(tx, "purge/relink", subject="s")
    for stem, statement in schema_statements():
        db.driver.execute_query(statement)
    subprocess.run(["java", "-version"])
"""


@pytest.mark.parametrize("source", BUILT_FROM_STRINGS.values(), ids=BUILT_FROM_STRINGS.keys())
def test_the_query_text_check_catches_a_string_built_query(source: str) -> None:
    assert _violations(ast.parse(source), "graphsvc.ops.example") != []


def test_the_query_text_check_accepts_names_and_file_texts() -> None:
    assert _violations(ast.parse(NOT_BUILT), "graphsvc.ops.example") == []


def test_no_query_name_or_text_is_built_from_strings() -> None:
    # Replaces the regex on `.run(f"`: names and texts are checked in the AST,
    # through local names, for query(), run(), Database reads/writes,
    # execute_query() and Query().
    found = [v for m in MODULES for v in _violations(_tree(m), m)]
    assert found == []


def _query_name_literals() -> dict[str, set[str]]:
    """Every string constant in the package shaped like ``<cypher folder>/<name>``."""
    named: dict[str, set[str]] = {}
    for module in MODULES:
        # A transaction's label (db.write_tx(work, label="replica/register")) names
        # the unit of work in errors and timeouts, not a query file.
        labels = {
            id(k.value)
            for n in ast.walk(_tree(module))
            if isinstance(n, ast.Call)
            for k in n.keywords
            if k.arg == "label"
        }
        for node in ast.walk(_tree(module)):
            if id(node) in labels:
                continue
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and QUERY_NAME.fullmatch(node.value)
                and node.value.split("/")[0] in FOLDERS
            ):
                named.setdefault(node.value, set()).add(module)
    return named


def test_every_query_name_in_code_is_a_file() -> None:
    # Names reach query() as literals, module constants (name = "search/expand_level")
    # or fields of constants (IndexKind(..., "index/vector_state")); the calls that
    # take a name get no built string (test above), so every name is a literal.
    missing = {n: sorted(m) for n, m in _query_name_literals().items() if n not in FILES}
    assert missing == {}


def test_every_query_file_is_used() -> None:
    named = set(_query_name_literals())
    # cypher/schema is applied as a whole (schema_statements(): Database.apply_schema
    # and compact), so its files need not be named one by one.
    loads_schema = {
        m
        for m in MODULES
        if m != "graphsvc.store.queries"
        and any(
            isinstance(n, ast.Call) and ast.unparse(n.func).endswith("schema_statements")
            for n in ast.walk(_tree(m))
        )
    }
    assert "graphsvc.store.connection" in loads_schema
    unused = sorted(f for f in FILES - named if not f.startswith("schema/"))
    assert unused == []
    assert {f for f in FILES if f.startswith("schema/")}, "no schema files found"


def _runs_queries(module: str) -> bool:
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.Call):
            if _name_arg(node, module) is not None:
                return True
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "execute_query":
                return True
    return False


def test_only_the_store_loads_or_runs_queries() -> None:
    offenders = {m for m in MODULES if not _in(m, *STORE) and _runs_queries(m)}
    _check_pending(offenders, QUERY_RUNNER_PENDING)


# ------------------------------------------------------------------ layers


def test_the_import_graph_has_no_back_edge_beyond_pending() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "graphsvc.devtools", "imports"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert "imports between layers" in done.stdout
    assert "use cases     -> core" in done.stdout
    graph = devtools.import_graph(PKG)
    assert graph.unlayered == [], "put new modules in a layer (graphsvc.devtools.LAYERS)"
    found = {f"{s} -> {t}" for s, t in graph.back_edge_pairs()}
    _check_pending(found, {f"{s} -> {t}" for s, t in BACK_EDGE_PENDING})
    assert f"back edges (a lower layer importing a higher one): {len(found)}" in done.stdout


def test_a_back_edge_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "graphsvc"
    (pkg / "core").mkdir(parents=True)
    (pkg / "ops").mkdir()
    (pkg / "core" / "rules.py").write_text("from graphsvc.ops import write\n")
    (pkg / "ops" / "write.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..service import S\n"
    )
    (pkg / "service.py").write_text("from graphsvc.ops.write import x\n")
    graph = devtools.import_graph(pkg)
    assert graph.back_edge_pairs() == {
        ("graphsvc.core.rules", "graphsvc.ops.write"),
        ("graphsvc.ops.write", "graphsvc.service"),
    }
    assert [i.type_only for i in graph.back_edges] == [False, True]
    assert graph.edges[("facade/root", "use cases")] == 1


# Import circles among modules (type-only and deferred imports count: a circle is a
# pair of modules that cannot be understood apart). None is pending.
CIRCLE_PENDING: set[str] = set()
# The two protocol packages are siblings under the HTTP host (graphsvc.http): neither
# imports the other; what both use lives below them (core.batch_sizes).
PROTOCOL_PENDING: set[str] = set()


def _module_edges(root: Path) -> dict[str, set[str]]:
    mods = devtools.modules(root)
    known = set(mods)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        for imp in devtools.imports_of(mod, path, known):
            if imp.target in known and imp.target != mod:
                edges[mod].add(imp.target)
    return edges


def _circles(edges: dict[str, set[str]]) -> set[str]:
    """Every strongly connected set of two or more modules, as "a <-> b <-> …"."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: set[str] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.add(" <-> ".join(sorted(part)))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_among_modules() -> None:
    _check_pending(_circles(_module_edges(PKG)), CIRCLE_PENDING)


def test_a_type_only_circle_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "graphsvc"
    (pkg / "api").mkdir(parents=True)
    (pkg / "api" / "a.py").write_text("from graphsvc.api.b import B\n")
    (pkg / "api" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from graphsvc.api.a import A\n"
    )
    (pkg / "api" / "c.py").write_text("from graphsvc.api.a import A\n")
    assert _circles(_module_edges(pkg)) == {"graphsvc.api.a <-> graphsvc.api.b"}


def test_the_protocol_packages_do_not_import_each_other() -> None:
    edges = _module_edges(PKG)
    found = {
        f"{src} -> {dst}"
        for src, targets in edges.items()
        for dst in targets
        if (_in(src, "graphsvc.api") and _in(dst, "graphsvc.mcp_api"))
        or (_in(src, "graphsvc.mcp_api") and _in(dst, "graphsvc.api"))
    }
    _check_pending(found, PROTOCOL_PENDING)


# Fields that share a ranking knob's name but mean something else.
OTHER_MEANING = {
    "graphsvc.api.document_limits.DocumentLimits.max_depth",  # a GraphQL document's nesting
    "graphsvc.core.acquisition.EntityHop.entities",  # the entities one hop reached
    "graphsvc.core.views.ExportReport.entities",  # how many entities an export holds
    "graphsvc.api.operation_results.HealthInfo.entities",  # the entity index's facts
}


def _class_fields(root: Path) -> Iterator[tuple[str, str]]:
    """(module.Class, field) of every annotated class attribute in the package."""
    for mod, path in devtools.modules(root).items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for stmt in node.body:
                    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                        yield f"{mod}.{node.name}", stmt.target.id


def _redeclared_knobs(root: Path) -> set[str]:
    from dataclasses import fields

    from graphsvc.settings import RankingSettings

    knobs = {f.name for f in fields(RankingSettings)}
    return {
        f"{owner}.{name}"
        for owner, name in _class_fields(root)
        if name in knobs and not owner.startswith("graphsvc.settings.")
    } - OTHER_MEANING


def test_no_ranking_knob_is_declared_outside_settings() -> None:
    """Each ranking knob is declared once: use cases take RankingSettings itself."""
    assert _redeclared_knobs(PKG) == set()


def test_a_redeclared_ranking_knob_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "graphsvc" / "ops"
    pkg.mkdir(parents=True)
    (pkg / "evaluate.py").write_text(
        "from dataclasses import dataclass\n@dataclass\nclass Limits:\n"
        "    propagation: float\n    depth: int\n"
    )
    assert _redeclared_knobs(tmp_path / "graphsvc") == {"graphsvc.ops.evaluate.Limits.propagation"}


# Public functions and methods of the use cases and the facades return typed values
# (frozen dataclasses, pydantic models, typed dicts for a ranking's stored rows), never a
# bare ``dict[str, Any]`` (or its spellings: ``Mapping``, ``object`` values, a bare
# ``dict``, ``Any``) whose shape lives in the caller's head (issue 51); ``to_json`` (the
# JSON a surface prints) is what a typed value is for.
_UNTYPED_RESULT = re.compile(
    r"\b(dict|Dict|Mapping|MutableMapping)\[str, (Any|object)\]|^(dict|Dict|Any|object)$"
)


def _dict_results(root: Path, packages: tuple[str, ...]) -> set[str]:
    """``module[.Class].function`` of each public module-level function or method in
    ``packages`` whose return annotation holds ``dict[str, Any]`` or a spelling of it."""
    found: set[str] = set()
    for mod, path in devtools.modules(root).items():
        if not _in(mod, *packages):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        owners: list[tuple[str, list[ast.stmt]]] = [(mod, tree.body)]
        owners += [
            (f"{mod}.{c.name}", c.body)
            for c in tree.body
            if isinstance(c, ast.ClassDef) and not c.name.startswith("_")
        ]
        for owner, body in owners:
            for fn in body:
                if (
                    isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
                    and not fn.name.startswith("_")
                    and fn.name != "to_json"
                    and fn.returns is not None
                    and _UNTYPED_RESULT.search(ast.unparse(fn.returns).strip("'\""))
                ):
                    found.add(f"{owner}.{fn.name}")
    return found


def _typed_result_packages() -> tuple[str, ...]:
    """Every package of the use-case and facade layers (``devtools.LAYERS``): ops/,
    atomise/, forensics/, bulk/, service.py, admin.py, runtime.py."""
    layers = {"use cases", "facade/root"}
    return tuple(
        f"{devtools.PACKAGE}.{prefix}"
        for name, _, prefixes in devtools.LAYERS
        if name in layers
        for prefix in prefixes
    )


def test_use_cases_and_facades_return_typed_values() -> None:
    packages = _typed_result_packages()
    assert {"graphsvc.ops", "graphsvc.atomise", "graphsvc.forensics"} <= set(packages)
    assert {"graphsvc.service", "graphsvc.admin", "graphsvc.runtime"} <= set(packages)
    assert _dict_results(PKG, packages) == set()


def test_a_dict_result_is_found(tmp_path: Path) -> None:
    ops = tmp_path / "graphsvc" / "ops"
    ops.mkdir(parents=True)
    (ops / "purge.py").write_text(
        "from typing import Any\n"
        "def purge() -> dict[str, Any]: ...\n"
        "def _inner() -> dict[str, Any]: ...\n"
        "class R:\n    def to_json(self) -> dict[str, Any]: ...\n"
        "    def report(self) -> list[dict[str, Any]]: ...\n"
        "    def facts(self) -> Mapping[str, object] | None: ...\n"
        "    def raw(self) -> dict: ...\n"
        "    def anything(self) -> 'Any': ...\n"
        "    def typed(self) -> dict[AtomRef, AtomView]: ...\n"
        "    def rows(self) -> list[RankedRow]: ...\n"
    )
    assert _dict_results(tmp_path / "graphsvc", ("graphsvc.ops",)) == {
        "graphsvc.ops.purge.purge",
        "graphsvc.ops.purge.R.report",
        "graphsvc.ops.purge.R.facts",
        "graphsvc.ops.purge.R.raw",
        "graphsvc.ops.purge.R.anything",
    }


def test_the_module_list_names_every_module_with_a_docstring_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "graphsvc.devtools", "modules"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    listed = {
        line.strip().split(":")[0] for line in done.stdout.splitlines() if line.startswith("  ")
    }
    assert listed == {m.removeprefix("graphsvc.") for m in MODULES}
    assert "(no docstring)" not in done.stdout


# ------------------------------------------------------------------ function length (issue 31)
#
# A function or method longer than MAX_FUNCTION_LINES, counted from its ``def`` line
# to the end of its body (docstring included), hides its steps; split it into named
# pieces. Nested functions are measured on their own as well as inside their parent.

MAX_FUNCTION_LINES = 80
LONG_FUNCTION_PENDING: set[str] = set()


def _function_lengths(tree: ast.Module) -> Iterator[tuple[str, int]]:
    """Each function's qualified name (``Class.method``, ``outer.inner``) and length."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                assert child.end_lineno is not None
                yield name, child.end_lineno - child.lineno + 1
                yield from walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, prefix + child.name + ".")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def test_the_length_check_measures_methods_and_nested_functions() -> None:
    source = (
        "class C:\n"
        "    def m(self):\n"
        "        def inner():\n"
        "            return 1\n"
        "\n"
        "        return inner\n"
    )
    assert dict(_function_lengths(ast.parse(source))) == {"C.m": 5, "C.m.inner": 2}


def test_no_function_is_longer_than_the_limit() -> None:
    offenders = {
        f"{m}:{name}"
        for m in MODULES
        for name, length in _function_lengths(_tree(m))
        if length > MAX_FUNCTION_LINES
    }
    _check_pending(offenders, LONG_FUNCTION_PENDING)


# ------------------------------------------------------------------ composition (issue 31)
#
# graphsvc/runtime.py is the composition root: it alone builds a key ring (and so
# finds the key file), a Database, the lazy embedder and its timing wrapper, and
# reads the MAC secret; a use case is handed the built object or a callable. The
# defining module of each may build its own (``KeyRing.rotate``, ``for_settings``);
# tests build what they need. Calls are matched by name: ``KeyRing(...)``,
# ``KeyRing.load_or_create(...)``, ``signing_keys.KeyRing(...)`` alike.

ROOT_BUILT = {
    "KeyRing": "graphsvc.keys.signing_keys",
    "KeyRing.load_or_create": "graphsvc.keys.signing_keys",
    "Database": "graphsvc.store.connection",
    "Database.for_settings": "graphsvc.store.connection",
    "LazyEmbedder": "graphsvc.embed.lazy",
    "TimedEmbedder": "graphsvc.telemetry.metrics",
    "load_or_create_secret": "graphsvc.keys.server_secret",
    "JobWorker": "graphsvc.atomise.worker",
}
# module:call (none: any offender is a failure).
BUILT_OUTSIDE_THE_ROOT_PENDING: set[str] = set()


def _root_built_calls(tree: ast.AST) -> set[str]:
    """The ROOT_BUILT names ``tree`` calls (a module-qualified call counts too)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = ast.unparse(node.func)
        found.update(name for name in ROOT_BUILT if called == name or called.endswith("." + name))
    return found


def test_the_composition_check_finds_each_way_of_building() -> None:
    source = (
        "from graphsvc.keys import signing_keys\n"
        "def f(path, db):\n"
        "    ring = signing_keys.KeyRing.load_or_create(path)\n"
        "    other = KeyRing(path, [])\n"
        "    conn = Database('bolt://x', 'u', '', 'neo4j')\n"
        "    db.read('x')\n"
        "    return KeyRing.public_keys(ring), Database.for_settings\n"
    )
    assert _root_built_calls(ast.parse(source)) == {
        "KeyRing.load_or_create",
        "KeyRing",
        "Database",
    }


def test_only_the_composition_root_builds_key_rings_and_connections() -> None:
    offenders = {
        f"{m}:{name}"
        for m in MODULES
        if m != "graphsvc.runtime"
        for name in _root_built_calls(_tree(m))
        if ROOT_BUILT[name] != m
    }
    _check_pending(offenders, BUILT_OUTSIDE_THE_ROOT_PENDING)
    assert {"KeyRing.load_or_create", "Database.for_settings", "JobWorker"} <= (
        _root_built_calls(_tree("graphsvc.runtime"))
    )


def _private_reaches(tree: ast.Module) -> list[str]:
    """``obj._name`` on anything but self/cls, and ``getattr(obj, "_name")``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            owner = node.value
            own = isinstance(owner, ast.Name) and owner.id in {"self", "cls"}
            if node.attr.startswith("_") and not node.attr.startswith("__") and not own:
                found.append(f"{ast.unparse(node)} (line {node.lineno})")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            args = node.args
            if node.func.id in {"getattr", "setattr", "hasattr"} and len(args) >= 2:
                name = args[1]
                if isinstance(name, ast.Constant) and str(name.value).startswith("_"):
                    found.append(f"{node.func.id}(…, {name.value!r}) (line {node.lineno})")
    return found


def test_the_store_uses_no_private_driver_api() -> None:
    # The driver's private attributes (a session's `_pipelined_begin`, a result's
    # `_records`) change without notice between patch releases; the store keeps to the
    # public API, and to its own objects' private parts only.
    offenders = {
        f"{m}: {hit}"
        for m in MODULES
        if m.startswith("graphsvc.store")
        for hit in _private_reaches(_tree(m))
    }
    assert offenders == set()
