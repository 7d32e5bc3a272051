"""requirements.lock pins every dependency pyproject.toml names (scripts/lock.sh)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement string (PEP 503)."""
    bare = re.split(r"[\[<>=!~; ]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", bare).lower()


def _locked() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, _, version = line.partition("==")
        assert version, f"requirements.lock: {line!r} is not an exact pin"
        pins[_name(name)] = version
    return pins


def test_every_dependency_and_dev_tool_is_pinned_in_the_lock() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(r) for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        wanted |= {_name(r) for r in extra}
    wanted.discard("graphsvc")  # dev pulls in the mpnet extra as graphsvc[mpnet]
    locked = _locked()
    missing = sorted(wanted - set(locked))
    assert missing == [], f"run scripts/lock.sh: not in requirements.lock: {missing}"
    assert "graphsvc" not in locked  # the project itself is installed from the tree


def test_bootstrap_installs_with_the_lock_as_constraints() -> None:
    script = (ROOT / "scripts" / "bootstrap.sh").read_text()
    assert "-c requirements.lock" in script
    # The install stamp covers the lock, so a changed pin reinstalls.
    assert "cat pyproject.toml requirements.lock" in script
