"""One exit-code table for every command (docs/cli.md): each error code has one exit
code, the same error exits with the same code from every command, and it is printed
once in one format. All of these fail before a database is reached."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

import graphsvc.errors as errors
from graphsvc.cli import build_parser, main
from graphsvc.cli.exit_codes import ERROR_EXITS, EXIT_REFUSED, OUTCOME_EXITS

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
UNREACHABLE = "bolt://127.0.0.1:9"


def _error_codes() -> set[str]:
    seen: set[str] = set()
    todo: list[type[errors.GraphsvcError]] = [errors.GraphsvcError]
    while todo:
        cls = todo.pop()
        seen.add(cls.code)
        todo.extend(cls.__subclasses__())
    return seen


def _commands(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, list[str]]:
    """Every leaf command (``index rebuild``) and its option strings."""
    out: dict[str, list[str]] = {}
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return {
            prefix: [
                s for a in parser._actions for s in a.option_strings if s not in ("-h", "--help")
            ]
        }
    for name, sub in subs[0].choices.items():
        out.update(_commands(sub, f"{prefix} {name}".strip()))
    return out


def test_every_error_code_has_one_exit_code_and_the_doc_lists_them_all() -> None:
    assert set(ERROR_EXITS) == _error_codes()
    doc = DOC.read_text(encoding="utf-8")
    documented = {
        m[1]: int(m[2]) for m in re.finditer(r"^\| `([A-Z0-9_]+)` \| (\d+) \|$", doc, re.M)
    }
    assert documented == ERROR_EXITS
    for command, code in OUTCOME_EXITS:
        assert re.search(rf"^\| `{command}` \| {code} \|", doc, re.M), (command, code)


def test_the_doc_describes_every_command_and_flag() -> None:
    doc = DOC.read_text(encoding="utf-8")
    binding = doc[doc.index("The binding flags") : doc.index("### ")]
    commands = _commands(build_parser())
    assert len(commands) >= 17
    for command, flags in commands.items():
        start = re.search(rf"^### `graphsvc {re.escape(command)}[ `|]", doc, re.M)
        assert start, command
        end = doc.find("\n### ", start.end())
        section = doc[start.start() : end if end > 0 else len(doc)]
        for flag in flags:
            named = re.compile(rf"[`/]{re.escape(flag)}\b")
            in_binding = "--subject" in flags and named.search(binding)
            assert named.search(section) or in_binding, (command, flag)


@pytest.fixture()
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Settings that point at no database: anything that connects would fail."""
    monkeypatch.setenv("GRAPHSVC_NEO4J_URI", UNREACHABLE)
    monkeypatch.setenv("GRAPHSVC_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("GRAPHSVC_CURATOR", "none")
    return tmp_path


def _invalid_input_commands(tmp: Path) -> dict[str, list[str]]:
    bad_rows = tmp / "bad.jsonl"
    bad_rows.write_text("{oops\n", encoding="utf-8")
    missing = str(tmp / "absent.json")
    return {
        "write": ["write", missing, "--subject", "s"],
        "import": ["import", str(bad_rows), "--subject", "s"],
        "namespace-policy": ["namespace-policy", "--subject", "s", "--set", f"@{missing}"],
        "export": ["export", "--subject", "s", "--format", "csv"],
        "compact": ["compact", "--batch", "0"],
        "index rebuild": ["index", "rebuild", "--timeout", "0"],
    }


@pytest.mark.req("API-4")
def test_the_same_error_exits_with_the_same_code_from_every_command(
    offline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, argv in _invalid_input_commands(offline).items():
        assert main([*argv, "--json"]) == EXIT_REFUSED, name
        out, err = capsys.readouterr()
        doc = json.loads(out)  # exactly one document
        assert doc["error"] == "INVALID_INPUT" and doc["exitCode"] == EXIT_REFUSED, name
        assert set(doc) <= {"error", "message", "exitCode", "row", "batch", "changeId", "rows"}
        assert "INVALID_INPUT" not in err, name

        assert main(argv) == EXIT_REFUSED, name
        out, err = capsys.readouterr()
        assert out == "", name
        lines = [line for line in err.splitlines() if "INVALID_INPUT" in line]
        assert len(lines) == 1 and lines[0].startswith("graphsvc: INVALID_INPUT: "), (name, err)


@pytest.mark.req("ATM-8", "API-4")
def test_tier_locked_is_3_before_anything_connects(
    offline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["atomise", "a-1", "--subject", "s", "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["error"] == "TIER_LOCKED"


def test_a_bad_environment_value_is_printed_in_the_same_format(
    offline: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GRAPHSVC_CURATOR", "oracle")
    assert main(["search", "q", "--subject", "s", "--json"]) == EXIT_REFUSED
    doc = json.loads(capsys.readouterr().out)
    assert doc == {"error": "INVALID_INPUT", "message": doc["message"], "exitCode": 8}


@pytest.mark.req("API-4")
def test_an_unreachable_database_exits_6_from_every_command_that_connects(
    offline: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GRAPHSVC_NEO4J_MAX_RETRY_TIME_S", "0.1")
    monkeypatch.setenv("GRAPHSVC_NEO4J_TRANSIENT_RETRY_S", "0.1")
    for argv in (
        ["inspect", "a-1", "--subject", "s"],
        ["purge", "a-1", "--subject", "s"],
        ["erasure", "status"],
    ):
        assert main([*argv, "--json"]) == 6, argv
        doc = json.loads(capsys.readouterr().out)
        assert (doc["error"], doc["exitCode"]) == ("STORE_UNAVAILABLE", 6), argv


def test_inspect_takes_graphqls_upper_case_link_kind_and_direction() -> None:
    args = build_parser().parse_args(
        ["inspect", "a1", "--subject", "s", "--version", "LOGICAL", "--direction", "Incoming"]
    )
    assert (args.version, args.direction) == ("logical", "incoming")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["inspect", "a1", "--version", "pinned"])
