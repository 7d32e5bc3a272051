"""The user documentation stays true to the code: docs/configuration.md lists every
setting with its section and default (and README's short table agrees with it),
README's GraphQL examples validate against schema.graphql, every relative link of
README.md and docs/*.md resolves (file and #anchor), and docs/architecture.md places
every SPEC requirement family, lists every module and nothing else, and names every
node label the queries create."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest
from graphql import build_schema, parse, validate

from graphsvc.settings import EXPERIMENTAL_NAMES, NAMES, Settings

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
CONFIGURATION = ROOT / "docs" / "configuration.md"
EXPERIMENTAL_HEADING = "Experimental ranking settings"
DOCS = sorted((ROOT / "docs").glob("*.md"))


def _section(text: str, heading: str) -> str:
    """The body of the ``## heading`` section of a Markdown text."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"no '## {heading}' section"
    return match.group(1)


def _config_rows(heading: str = "Settings") -> list[tuple[str, list[str], list[str]]]:
    """(section, variables, default literals) of each row of the table under
    ``heading`` in docs/configuration.md."""
    rows = []
    for line in _section(CONFIGURATION.read_text(encoding="utf-8"), heading).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 4 or not cells[1].startswith("`GRAPHSVC_"):
            continue
        names = re.findall(r"`GRAPHSVC_([A-Z0-9_]+)`", cells[1])
        rows.append(
            (cells[0].strip("`"), [n.lower() for n in names], re.findall(r"`([^`]*)`", cells[2]))
        )
    return rows


def _documented_default(literal: str, default: object) -> bool:
    if literal == '""':
        return default == ""
    if isinstance(default, bool):
        return literal == str(default).lower()
    if isinstance(default, int | float):
        try:
            return float(literal) == float(default)
        except ValueError:
            return False
    return literal == str(default)


def _defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, object]:
    """Every setting's default by lower-case name, the directories for a plain HOME."""
    # The two directory defaults depend on HOME and XDG_*; document them for a plain HOME.
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    settings = Settings()
    defaults: dict[str, object] = {}
    for name, (section, field) in NAMES.items():
        value = getattr(getattr(settings, section), field)
        if isinstance(value, Path):
            value = "~" + str(value)[len(str(tmp_path)) :]
        defaults[name] = value
    return defaults


def test_configuration_page_lists_every_setting_with_its_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    defaults = _defaults(monkeypatch, tmp_path)
    rows = _config_rows()
    experimental = _config_rows(EXPERIMENTAL_HEADING)
    documented = [name for _, names, _ in rows + experimental for name in names]
    missing = sorted(set(defaults) - set(documented))
    unknown = sorted(set(documented) - set(defaults))
    twice = sorted({n for n in documented if documented.count(n) > 1})
    assert not missing, f"settings missing from docs/configuration.md: {missing}"
    assert not unknown, f"docs/configuration.md documents settings that do not exist: {unknown}"
    assert not twice, f"settings documented twice: {twice}"
    order = [f.name for f in fields(Settings)]
    sections = [section for section, _, _ in rows]
    assert sections == sorted(sections, key=order.index), "rows in the order of the sections"
    for section, names, literals in rows + experimental:
        assert len(names) == len(literals), f"row {names}: one default per variable"
        for name, literal in zip(names, literals, strict=True):
            assert NAMES[name][0] == section, f"GRAPHSVC_{name.upper()} is in {NAMES[name][0]}"
            assert _documented_default(literal, defaults[name]), (
                f"GRAPHSVC_{name.upper()}: docs/configuration.md says {literal!r}, "
                f"settings.py says {defaults[name]!r}"
            )


def test_experimental_settings_are_listed_apart_and_ship_off(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The measured-off switches (issue 51) are one table of their own, exactly the
    settings marked EXPERIMENTAL, each row linking its figures; the main table holds
    none of them; and the settings' defaults leave every experiment off."""
    experimental = _config_rows(EXPERIMENTAL_HEADING)
    listed = {name for _, names, _ in experimental for name in names}
    assert listed == set(EXPERIMENTAL_NAMES)
    assert not listed & {name for _, names, _ in _config_rows() for name in names}
    section = _section(CONFIGURATION.read_text(encoding="utf-8"), EXPERIMENTAL_HEADING)
    for line in section.splitlines():
        if line.startswith("| `ranking`"):
            assert re.search(r"\]\([\w-]+\.md#[\w-]+\)", line), f"no figures linked: {line}"
    defaults = _defaults(monkeypatch, tmp_path)
    off = {"link_weighting": "in", "lexical_normalisation": "max", "lexical_scope": "candidates",
           "entity_query_weight": 0.0, "similar_heads": 0, "similar_weight": 1.0}  # fmt: skip
    assert {n: defaults[n] for n in EXPERIMENTAL_NAMES} == off


def test_readme_short_configuration_table_agrees_with_the_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    defaults = _defaults(monkeypatch, tmp_path)
    rows = 0
    for line in _section(README.read_text(encoding="utf-8"), "Configuration").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3 or not cells[0].startswith("`GRAPHSVC_"):
            continue
        names = [n.lower() for n in re.findall(r"`GRAPHSVC_([A-Z0-9_]+)`", cells[0])]
        literals = re.findall(r"`([^`]*)`", cells[1])
        assert len(names) == len(literals), f"row {names}: one default per variable"
        for name, literal in zip(names, literals, strict=True):
            assert name in defaults, f"README names GRAPHSVC_{name.upper()}, which does not exist"
            assert _documented_default(literal, defaults[name]), (
                f"GRAPHSVC_{name.upper()}: README says {literal!r}, "
                f"settings.py says {defaults[name]!r}"
            )
        rows += 1
    assert rows >= 3, "README's configuration section names the settings a first run needs"


def test_readme_graphql_examples_validate_against_the_schema() -> None:
    schema = build_schema((ROOT / "schema.graphql").read_text(encoding="utf-8"))
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```graphql\n(.*?)```", text, re.S)
    inline = re.findall(r"`(\{ (?:search|read|inspect|health)\b[^`]*\})`", text)
    assert len(blocks) >= 5, "the tour shows write, search, read, inspect and lineage"
    for query in blocks + inline:
        errors = validate(schema, parse(query))
        assert not errors, f"{query[:50]!r}: {[e.message for e in errors]}"


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    in_code = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        slug = _slug(line.lstrip("#"))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.name)
def test_relative_links_resolve(page: Path) -> None:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        missing_anchor = (
            dest.exists() and dest.suffix == ".md" and anchor and anchor not in _anchors(dest)
        )
        if not dest.exists() or missing_anchor:
            broken.append(target)
    assert not broken, f"{page.name}: broken links {broken}"


def test_architecture_places_every_requirement_family() -> None:
    ids = (ROOT / "docs" / "requirement-ids.txt").read_text(encoding="utf-8").split()
    families = {i.rsplit("-", 1)[0] for i in ids}
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = sorted(f for f in families if not re.search(rf"\b{f}-", text))
    assert not missing, f"docs/architecture.md does not place {missing}"


def _module_lines() -> tuple[dict[str, str], set[str]]:
    """docs/architecture.md's module list: {package: its text}, and the root modules."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    match = re.search(r"^## Modules\n.*?```\n(.*?)```", text, re.S | re.M)
    assert match, "docs/architecture.md has no module list"
    packages: dict[str, str] = {}
    roots: set[str] = set()
    current = None
    for line in match.group(1).splitlines():
        head = re.match(r"  ([a-z_]+)/\s+(.*)", line)
        if head:
            current = head.group(1)
            packages[current] = head.group(2)
        elif line.startswith("    ") and current:
            packages[current] += " " + line
        else:
            current = None
            roots.update(re.findall(r"\b([a-z_]+)\.py\b", line))
    return packages, roots


def _listed_names(text: str) -> set[str]:
    """The names after a package's first ':', notes in parentheses and code left out."""
    body = text.split(":", 1)[1]
    while re.search(r"\([^()]*\)", body):
        body = re.sub(r"\([^()]*\)", " ", body)
    body = re.sub(r"`[^`]*`", " ", body)
    return {n for n in re.split(r"[,:\s]+", body) if n}


def test_architecture_lists_every_module_and_only_modules() -> None:
    packages, roots = _module_lines()
    pkg = ROOT / "graphsvc"
    folders = {p.name for p in pkg.iterdir() if (p / "__init__.py").exists()}
    assert set(packages) == folders
    for name, text in packages.items():
        folder = pkg / name
        held = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
        held |= {p.name for p in folder.iterdir() if p.is_dir() and p.name != "__pycache__"}
        listed = _listed_names(text) if held else set()
        missing, extra = sorted(held - listed), sorted(listed - held)
        assert listed == held, f"graphsvc/{name}/: missing {missing}, not modules {extra}"
    top = {p.stem for p in pkg.glob("*.py") if p.stem not in ("__init__", "__main__")}
    assert roots == top, f"missing {sorted(top - roots)}, not modules {sorted(roots - top)}"


def test_architecture_names_every_node_label_the_queries_create() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    data = re.search(r"^## Data in Neo4j\n(.*?)(?=^## )", text, re.S | re.M)
    assert data, "docs/architecture.md has no data section"
    labels_table = data.group(1).split("| relationship |")[0]
    documented = set(re.findall(r"^\| `([A-Z][A-Za-z]+)`", labels_table, re.M))
    created: set[str] = set()
    for path in (ROOT / "cypher").rglob("*.cypher"):
        for clause in re.findall(r"\b(?:CREATE|MERGE)\b[^;]*", path.read_text(encoding="utf-8")):
            created.update(re.findall(r"\(\s*\w*\s*((?::[A-Z][A-Za-z]+)+)", clause))
    labels = {label for group in created for label in group.split(":") if label}
    labels -= {"CONSTRAINT", "INDEX"}
    assert labels <= documented, f"undocumented labels: {sorted(labels - documented)}"
    assert documented <= labels, f"documented but never created: {sorted(documented - labels)}"
