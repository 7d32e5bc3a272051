"""Developer tools: ``python -m graphsvc.devtools imports`` prints the import graph.

``python -m graphsvc.devtools modules`` lists every module, by layer, with the first
line of its docstring.

The package's layers, lowest first (a layer may import the layers below it)::

    base        errors, settings, metrics, request_scope, logging_setup
    core        graphsvc/core: pure rules, no I/O
    store       graphsvc/store: the only package that imports neo4j or runs a query
    localdb     graphsvc/localdb: the managed local Neo4j (launcher, store tools)
    adapters    embed, tokenizer, signing_keys, server_secret, auth, inputs, text_input
    use cases   graphsvc/ops, graphsvc/atomise, graphsvc/forensics, bulk_import, import_rows
    facade/root service (the facade), runtime (the composition root)
    edges       graphsvc/api, graphsvc/mcp_api, the CLI (graphsvc/cli, __main__), seed

Every ``import`` counts, those inside functions and under ``TYPE_CHECKING`` too (a
type-only import still ties two modules together). An import from a layer to a
higher one is a *back edge*; ``store``, ``localdb`` and ``adapters`` share a rank
(none is above another). The architecture test (tests/unit/test_architecture.py)
runs the same analysis and allows no back edge beyond its PENDING list.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "LAYERS",
    "Import",
    "ImportGraph",
    "import_graph",
    "imports_of",
    "layer_of",
    "main",
    "module_list",
    "modules",
]

PACKAGE = "graphsvc"

# (layer, rank, module prefixes): a module belongs to the first layer with a prefix
# equal to it or a parent package of it.
LAYERS: tuple[tuple[str, int, tuple[str, ...]], ...] = (
    (
        "base",
        0,
        ("errors", "settings", "telemetry", "devtools"),
    ),
    ("core", 1, ("core",)),
    ("store", 2, ("store",)),
    ("localdb", 2, ("localdb",)),
    (
        "adapters",
        2,
        (
            "embed",
            "entities",
            "tokenizer",
            "keys",
            "inputs",
        ),
    ),
    # What a serving process keeps between requests: above the store it reads through,
    # beside the use cases that consult it.
    ("process state", 3, ("process_state",)),
    ("use cases", 4, ("ops", "atomise", "forensics", "bulk")),
    ("facade/root", 5, ("service", "admin", "runtime")),
    # The two protocols, GraphQL and MCP, side by side.
    ("protocols", 6, ("api", "mcp_api")),
    # What serves them: the HTTP host, the CLI (`graphsvc serve` starts the host), the
    # demo seeding.
    ("edges", 7, ("http", "cli", "__main__", "seed")),
)
_RANK = {name: rank for name, rank, _ in LAYERS}


@dataclass(frozen=True)
class Import:
    """One import statement's target inside the package."""

    source: str  # importing module, e.g. graphsvc.ops.read
    target: str  # imported module, e.g. graphsvc.service
    line: int
    type_only: bool


@dataclass(frozen=True)
class ImportGraph:
    """Imports between layers, and the back edges among them."""

    layers: dict[str, list[str]]  # layer -> its modules
    edges: Counter[tuple[str, str]]  # (from layer, to layer) -> imports
    back_edges: list[Import]  # imports from a layer to a higher one
    unlayered: list[str]  # modules no layer claims (a new top-level module)

    def back_edge_pairs(self) -> set[tuple[str, str]]:
        """``(importing module, imported module)`` of every back edge."""
        return {(i.source, i.target) for i in self.back_edges}


def package_dir() -> Path:
    return Path(__file__).resolve().parent


def modules(root: Path | None = None) -> dict[str, Path]:
    """Every module of the package: dotted name -> file."""
    root = root or package_dir()
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = (PACKAGE, *path.relative_to(root).with_suffix("").parts)
        name = ".".join(parts).removesuffix(".__init__")
        found[name] = path
    return found


def imports_of(module: str, path: Path, known: set[str] | None = None) -> list[Import]:
    """Imports of package modules in ``path`` (relative imports resolved).

    ``from graphsvc.x import y`` is an import of ``graphsvc.x.y`` when that is a
    module (in ``known``), else of ``graphsvc.x``.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: list[Import] = []
    for node, type_only in _walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node.module, node.level)
            targets = []
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.append(sub if known is not None and sub in known else base)
        else:
            continue
        for target in targets:
            if target == PACKAGE or target.startswith(PACKAGE + "."):
                found.append(Import(module, target, node.lineno, type_only))
    return found


def _walk(tree: ast.AST) -> Iterator[tuple[ast.AST, bool]]:
    """Every node, with whether it sits under ``if TYPE_CHECKING:``."""
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, type_only = stack.pop()
        yield node, type_only
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend((child, True) for child in node.body)
            stack.extend((child, type_only) for child in node.orelse)
            continue
        stack.extend((child, type_only) for child in ast.iter_child_nodes(node))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _absolute(module: str, is_package: bool, name: str | None, level: int) -> str:
    if level == 0:
        return name or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, name] if name else parts)


def layer_of(module: str) -> str | None:
    """The layer of a package module (None: the package itself or an unknown module)."""
    rest = module.removeprefix(PACKAGE + ".")
    if rest == module:
        return None
    for name, _, prefixes in LAYERS:
        if any(rest == p or rest.startswith(p + ".") for p in prefixes):
            return name
    return None


def import_graph(root: Path | None = None) -> ImportGraph:
    """The import graph of the package between its layers."""
    mods = modules(root)
    known = set(mods)
    layers: dict[str, list[str]] = {name: [] for name, _, _ in LAYERS}
    unlayered: list[str] = []
    for mod in mods:
        layer = layer_of(mod)
        if layer is not None:
            layers[layer].append(mod)
        elif mod != PACKAGE:
            unlayered.append(mod)
    edges: Counter[tuple[str, str]] = Counter()
    back: list[Import] = []
    for mod, path in mods.items():
        src = layer_of(mod)
        if src is None:
            continue
        for imp in imports_of(mod, path, known):
            dst = layer_of(imp.target)
            if dst is None or dst == src:
                continue
            edges[(src, dst)] += 1
            if _RANK[dst] > _RANK[src]:
                back.append(imp)
    back.sort(key=lambda i: (i.source, i.target, i.line))
    return ImportGraph(layers, edges, back, unlayered)


def render(graph: ImportGraph) -> str:
    """The graph as text: layers, edges with counts, back edges."""
    order = [name for name, _, _ in LAYERS]
    lines = [
        "graphsvc import graph between layers (lowest first):",
        "  base <- core <- store | localdb | adapters <- process state <- use cases"
        " <- facade/root <- protocols <- edges",
        "",
    ]
    for name in order:
        lines.append(f"  {name:<13} {len(graph.layers[name]):>3} modules")
    lines += ["", "imports between layers (from -> to: count):"]
    for (src, dst), count in sorted(
        graph.edges.items(), key=lambda kv: (order.index(kv[0][0]), order.index(kv[0][1]))
    ):
        mark = "   BACK EDGE" if _RANK[dst] > _RANK[src] else ""
        lines.append(f"  {src:<13} -> {dst:<13} {count:>4}{mark}")
    pairs = sorted(graph.back_edge_pairs())
    lines += ["", f"back edges (a lower layer importing a higher one): {len(pairs)}"]
    for source, target in pairs:
        lines.append(f"  {source} ({layer_of(source)}) -> {target} ({layer_of(target)})")
    if graph.unlayered:
        lines += ["", "modules in no layer (add them to graphsvc.devtools.LAYERS):"]
        lines += [f"  {m}" for m in graph.unlayered]
    return "\n".join(lines)


def module_list(root: Path | None = None) -> str:
    """Every module by layer, with the first line of its docstring."""
    lines: list[str] = []
    by_layer: dict[str | None, list[tuple[str, Path]]] = {}
    for mod, path in modules(root).items():
        by_layer.setdefault(layer_of(mod), []).append((mod, path))
    for name in [n for n, _, _ in LAYERS] + [None]:
        if name not in by_layer:
            continue
        lines.append(f"{name or 'package'}:")
        for mod, path in by_layer[name]:
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            first = doc.strip().splitlines()[0] if doc.strip() else "(no docstring)"
            lines.append(f"  {mod.removeprefix(PACKAGE + '.')}: {first}")
    return "\n".join(lines)


def _as_json(graph: ImportGraph) -> dict[str, object]:
    return {
        "layers": graph.layers,
        "edges": [{"from": s, "to": d, "imports": n} for (s, d), n in sorted(graph.edges.items())],
        "backEdges": [
            {"from": i.source, "to": i.target, "line": i.line, "typeOnly": i.type_only}
            for i in graph.back_edges
        ],
        "unlayered": graph.unlayered,
    }


def main(argv: list[str] | None = None) -> int:
    """``imports [--json] [--check]``; ``--check`` exits 1 when there is a back edge."""
    ap = argparse.ArgumentParser(prog="python -m graphsvc.devtools")
    sub = ap.add_subparsers(dest="command", required=True)
    imp = sub.add_parser("imports", help="the import graph between layers, as text")
    imp.add_argument("--json", action="store_true", help="print JSON instead of text")
    imp.add_argument("--check", action="store_true", help="exit 1 on a back edge")
    sub.add_parser("modules", help="every module by layer with its docstring's first line")
    args = ap.parse_args(argv)
    if args.command == "modules":
        print(module_list())
        return 0
    graph = import_graph()
    if args.json:
        print(json.dumps(_as_json(graph), indent=1))
    else:
        print(render(graph))
    if args.check and (graph.back_edges or graph.unlayered):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
