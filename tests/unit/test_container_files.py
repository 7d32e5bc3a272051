"""The container files agree with the project (no Docker engine here to build them).

What a build would catch late: the compose service not using the Dockerfile, a
container that installs packages at every start, a healthcheck on another path
than readiness, versions other than the ones the suite runs on.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from graphsvc.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def _dockerfile() -> list[str]:
    """Instructions of the Dockerfile, continuation lines joined, comments dropped."""
    joined = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    return [
        line.strip()
        for line in joined.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def test_compose_builds_graphsvc_from_the_dockerfile_and_installs_nothing_at_start() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    service = compose["services"]["graphsvc"]
    assert service["build"] == "."
    command = " ".join(service["command"])
    assert "pip" not in command
    assert service["depends_on"]["neo4j"]["condition"] == "service_healthy"


def test_compose_runs_the_neo4j_version_the_suite_runs_on() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    pinned = Settings().neo4j.version_range.strip("[]")
    assert compose["services"]["neo4j"]["image"] == f"neo4j:{pinned}-community"


def test_the_image_installs_the_locked_versions_and_checks_readiness() -> None:
    steps = _dockerfile()
    assert any(s.startswith("COPY requirements.lock") for s in steps)
    assert any(s.startswith("RUN") and "requirements.lock" in s for s in steps)
    health = [s for s in steps if s.startswith("HEALTHCHECK")]
    assert len(health) == 1 and "/readyz" in health[0]
    assert any(s.startswith("USER ") and "root" not in s for s in steps)
    # The model is loaded at build time, not at the first request.
    assert any(s.startswith("RUN") and "get_embedder()" in s for s in steps)
