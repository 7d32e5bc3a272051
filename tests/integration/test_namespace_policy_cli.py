"""``graphsvc namespace-policy``: show and set the auto-atomise policy (ATM-9) from the
CLI, as a real subprocess against the session Neo4j."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from atomise_support import cli_env, run_cli

from graphsvc.core.binding import Binding
from graphsvc.service import Service
from graphsvc.settings import Settings


@pytest.fixture()
def env(test_settings: Settings, tmp_path: Path) -> dict[str, str]:
    return cli_env(test_settings, tmp_path / "state")


@pytest.mark.req("ATM-9")
def test_set_then_show_round_trips_and_the_service_sees_it(
    service: Service, env: dict[str, str], tmp_path: Path
) -> None:
    subject = f"t-{uuid.uuid4().hex[:12]}"
    shown = run_cli(["namespace-policy", "--subject", subject, "--json"], env)
    assert shown.code == 0, shown.stderr
    assert shown.json()["resolvedMode"] is None  # the all-off default

    policy = {"auto_atomise_mode": "synchronous", "auto_atomise_threshold_cl100k": 400}
    set_ = run_cli(
        ["namespace-policy", "--subject", subject, "--set", json.dumps(policy), "--json"], env
    )
    assert set_.code == 0, set_.stderr
    assert set_.json()["resolvedMode"] == "synchronous"
    assert set_.json()["auto_atomise_threshold_cl100k"] == 400

    again = run_cli(["namespace-policy", "--subject", subject, "--json"], env)
    assert again.code == 0 and again.json() == set_.json()
    from graphsvc.atomise.policy import get_namespace_policy

    stored = get_namespace_policy(service.db, Binding(subject, "default", "human", "cli"))
    assert stored.mode == "synchronous" and stored.auto_atomise_threshold_cl100k == 400

    # From a file, wrapped as {"governance": …}; plain text output names the mode.
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"governance": {"auto_atomise": True}}))
    from_file = run_cli(["namespace-policy", "--subject", subject, "--set", f"@{path}"], env)
    assert from_file.code == 0, from_file.stderr
    assert "is now deferred" in from_file.stdout


@pytest.mark.req("ATM-9")
def test_bad_policy_and_agents_are_refused_and_nothing_changes(env: dict[str, str]) -> None:
    subject = f"t-{uuid.uuid4().hex[:12]}"
    bad = run_cli(
        ["namespace-policy", "--subject", subject, "--set", '{"auto_atomise_mode": 3}', "--json"],
        env,
    )
    assert bad.code == 8  # REFUSED (docs/cli.md)
    assert bad.json()["error"] == "INVALID_INPUT"
    unknown = run_cli(
        ["namespace-policy", "--subject", subject, "--set", '{"surprise": true}', "--json"], env
    )
    assert unknown.code == 8 and unknown.json()["error"] == "INVALID_INPUT"
    missing = run_cli(
        ["namespace-policy", "--subject", subject, "--set", "@/nonexistent/p.json", "--json"],
        env,
    )
    assert missing.code == 8 and missing.json()["error"] == "INVALID_INPUT"
    agent = run_cli(
        [
            "namespace-policy",
            "--subject",
            subject,
            "--actor-kind",
            "agent",
            "--set",
            '{"auto_atomise": true}',
            "--json",
        ],
        env,
    )
    assert agent.code == 8 and agent.json()["error"] == "PERMISSION_DENIED"
    shown = run_cli(["namespace-policy", "--subject", subject, "--json"], env)
    assert shown.code == 0 and shown.json()["resolvedMode"] is None
