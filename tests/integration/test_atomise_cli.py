"""``graphsvc atomise`` exit codes 0–7 (ATM-8), each run as a real subprocess.

The subprocess talks to the session Neo4j through ``GRAPHSVC_NEO4J_URI`` and shares
the session's signing key file; ``GRAPHSVC_CURATOR`` picks the tier.
"""

from __future__ import annotations

import os
import textwrap
import uuid
from pathlib import Path

import pytest
from atomise_support import (
    LEVEL,
    SENTENCES,
    THREE_SENTENCES,
    atoms_answer,
    cli_env,
    create,
    fake_ollama,
    footprint,
    run_cli,
    service_with,
)
from listener_support import CountingPort

from graphsvc.core.binding import Binding
from graphsvc.keys.signing_keys import KeyRing
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.store.connection import Database


@pytest.fixture()
def env(test_settings: Settings, tmp_path: Path) -> dict[str, str]:
    return cli_env(test_settings, tmp_path / "state")


@pytest.fixture(scope="module")
def rule(service: Service) -> Service:
    return service_with(service, curator="rule")


@pytest.mark.req("ATM-8", "ATM-4")
def test_exit_3_tier_locked_without_touching_the_database(
    test_settings: Settings, tmp_path: Path
) -> None:
    # The configured "Neo4j" is a port that counts connections (nothing behind it).
    with CountingPort() as port:
        closed = cli_env(
            test_settings,
            tmp_path,
            GRAPHSVC_CURATOR="none",
            GRAPHSVC_NEO4J_URI=port.uri,
        )
        result = run_cli(["atomise", "some-atom", "--subject", "s1", "--json"], closed)
        # The CLI refused before it opened one connection to the database.
        assert port.connections == 0
    assert result.code == 3, result.stderr
    assert result.json() == {
        "error": "TIER_LOCKED",
        "message": result.json()["message"],
        "exitCode": 3,
    }


@pytest.mark.req("ATM-8")
def test_exit_0_success_then_exit_1_informational(
    rule: Service, env: dict[str, str], human: Binding, subject: str
) -> None:
    parent = create(rule, human, THREE_SENTENCES)
    args = ["atomise", parent.atom_id, "--subject", subject, "--max-atom-tokens", "50", "--json"]
    done = run_cli(args, env)
    assert done.code == 0, done.stderr
    body = done.json()
    assert body.keys() >= {"sourceId", "atomIds", "atomCount", "archivedAt"}
    assert body["sourceId"] == parent.atom_id and body["atomCount"] == 3
    assert len(body["atomIds"]) == 3 and body["archivedAt"]

    again = run_cli(args, env)
    assert again.code == 1, again.stderr
    assert again.json()["alreadyAtomised"] is True
    assert again.json()["atomIds"] == body["atomIds"]

    short = create(rule, human, SENTENCES[0])
    small = run_cli(["atomise", short.atom_id, "--subject", subject, "--json"], env)
    assert small.code == 1 and small.json()["informational"] == "source_too_small"


@pytest.mark.req("ATM-8")
def test_exit_2_not_found(env: dict[str, str], subject: str) -> None:
    result = run_cli(["atomise", uuid.uuid4().hex, "--subject", subject], env)
    assert result.code == 2
    assert "NOT_FOUND" in result.stderr


@pytest.mark.req("ATM-8", "ATM-7")
def test_exit_4_curator_failed_after_three_retries(
    rule: Service, test_settings: Settings, tmp_path: Path, human: Binding, subject: str
) -> None:
    parent = create(rule, human, THREE_SENTENCES)
    with fake_ollama() as fake:  # always malformed, answered at once
        env = cli_env(
            test_settings, tmp_path, GRAPHSVC_CURATOR="ollama", GRAPHSVC_OLLAMA_URL=fake.base_url
        )
        result = run_cli(
            ["atomise", parent.atom_id, "--subject", subject, "--max-atom-tokens", "50", "--json"],
            env,
        )
        attempts = len(fake.bodies)
    assert result.code == 4, result.stderr
    assert result.json()["error"] == "CURATOR_FAILED"
    assert attempts == 4  # the CLI always allows 3 retries


@pytest.mark.req("ATM-8", "ATM-2")
def test_exit_5_governance_refused_commits_nothing(
    rule: Service,
    db: Database,
    test_settings: Settings,
    tmp_path: Path,
    human: Binding,
    subject: str,
) -> None:
    parent = create(rule, human, THREE_SENTENCES)
    (tmp_path / "refuse_hooks.py").write_text(
        textwrap.dedent(
            """
            from graphsvc.atomise.hooks import AtomiseHooks
            from graphsvc.errors import GovernanceRefusedError

            def _refuse(index, text):
                if "Alerts" in text:
                    raise GovernanceRefusedError("alerting details are restricted")

            HOOKS = AtomiseHooks(pre_store=_refuse)
            """
        )
    )
    env = cli_env(test_settings, tmp_path, GRAPHSVC_ATOMISE_HOOKS="refuse_hooks:HOOKS")
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    before = footprint(db, subject)
    result = run_cli(
        ["atomise", parent.atom_id, "--subject", subject, "--max-atom-tokens", "50", "--json"],
        env,
    )
    assert result.code == 5, result.stderr
    assert result.json()["error"] == "GOVERNANCE_REFUSED"
    assert "atom 1" in result.json()["message"]
    assert footprint(db, subject) == before


@pytest.mark.req("ATM-8", "SIG-4")
def test_exit_6_signer_error_on_an_unsafe_key_file(
    rule: Service, test_settings: Settings, tmp_path: Path, human: Binding, subject: str
) -> None:
    parent = create(rule, human, THREE_SENTENCES)
    key_file = tmp_path / "exposed-key.json"
    KeyRing.load_or_create(key_file)
    key_file.chmod(0o644)  # readable by others: it no longer proves who signed
    env = cli_env(test_settings, tmp_path, GRAPHSVC_KEY_FILE=str(key_file))
    result = run_cli(
        ["atomise", parent.atom_id, "--subject", subject, "--max-atom-tokens", "50", "--json"],
        env,
    )
    assert result.code == 6, result.stderr
    assert result.json()["error"] == "SIGNER_ERROR"


@pytest.mark.req("ATM-8", "ATM-5")
def test_exit_7_depth_exceeded(
    service: Service, env: dict[str, str], human: Binding, subject: str
) -> None:
    with fake_ollama(atoms_answer(LEVEL)) as fake:
        llm = service_with(service, curator="ollama", ollama_url=fake.base_url)
        current = create(llm, human, " ".join(LEVEL)).atom_id
        for _ in range(3):
            current = llm.atomise(human, current, max_atom_tokens=50).atom_ids[0]
    result = run_cli(["atomise", current, "--subject", subject, "--json"], env)
    assert result.code == 7, result.stderr
    assert result.json()["error"] == "DEPTH_EXCEEDED"
