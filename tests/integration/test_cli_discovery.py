"""The CLI finds a running ``graphsvc serve`` of its database by itself (issue 49).

A record in the state dir (what ``serve`` writes while it serves) names the test
session's live server; ``search`` then answers over HTTP with no setting (the child
imports no heavy module, which only the direct path loads), says so with
``--verbose``, and opens the database itself when the record does not hold: another
database, a process that is gone, or ``--server ''``. ``read`` in text mode names the
budget that would fit when nothing fits.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import direct_env, run_cli, write_kiln_and_glaze
from conftest import LiveServer

from graphsvc.cli.discovery import database_identity, find_serve, forget_serve, record_serve
from graphsvc.core.binding import Binding
from graphsvc.embed import get_embedder
from graphsvc.service import Service
from graphsvc.settings import Settings


@pytest.fixture(scope="module", autouse=True)
def _cached_graph() -> None:
    get_embedder()


def _env(settings: Settings, state: Path, auth: Path) -> dict[str, str]:
    return {**direct_env(settings, state), "GRAPHSVC_AUTH_FILE": str(auth)}


def _auth(path: Path, token: str, subject: str) -> Path:
    path.write_text(
        json.dumps({"tokens": {token: {"subject": subject, "actor": {"kind": "human", "id": "a"}}}})
    )
    return path


@pytest.mark.req("API-4")
def test_search_uses_the_serve_recorded_in_the_state_dir_and_falls_back_when_it_does_not_hold(
    service: Service,
    human: Binding,
    test_settings: Settings,
    live_server: LiveServer,
    tmp_path: Path,
) -> None:
    kiln = write_kiln_and_glaze(service, human)["kiln"].atom_id
    auth = _auth(tmp_path / "auth.json", live_server.token_for(human), human.subject)
    env = _env(test_settings, tmp_path, auth)
    mine = test_settings.with_(state_dir=tmp_path)
    args = ("search", "zorblax kiln", "--subject", human.subject, "--json", "--verbose")

    record = record_serve(mine, live_server.url)
    assert find_serve(mine) is not None
    rc, out, err, heavy = run_cli(env, *args)
    assert rc == 0, err
    assert f"asking the graphsvc serve at {live_server.url}/graphql (found in the state dir)" in err
    assert heavy == []  # over HTTP: no driver, no tokenizer, no model in the process
    assert json.loads(out)["hits"][0]["atom"]["atomId"] == kiln

    # --server '' opens the database for one command.
    rc, out, err, heavy = run_cli(env, *args, "--server", "")
    assert rc == 0, err
    assert "opening the database (--server '')" in err
    assert heavy != []
    assert json.loads(out)["hits"][0]["atom"]["atomId"] == kiln

    # Another database's serve is not used.
    other = json.loads(record.read_text())
    record.write_text(json.dumps({**other, "database": "bolt://elsewhere:7687|neo4j"}))
    rc, out, err, _ = run_cli(env, *args)
    assert rc == 0, err
    assert "no running graphsvc serve of this database: opening the database" in err
    assert json.loads(out)["hits"][0]["atom"]["atomId"] == kiln

    # A serve that is gone (its process exited) is not used either.
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    record.write_text(
        json.dumps({**other, "pid": int(gone.stdout), "database": database_identity(mine)})
    )
    assert find_serve(mine) is None
    rc, _, err, _ = run_cli(env, *args)
    assert rc == 0 and "no running graphsvc serve" in err

    # forget_serve removes only this process's record.
    record_serve(mine, live_server.url)
    forget_serve(mine)
    assert not record.exists()


@pytest.mark.req("API-4", "RD-4")
def test_read_in_text_mode_names_the_budget_that_would_fit(
    service: Service, human: Binding, test_settings: Settings, tmp_path: Path
) -> None:
    write_kiln_and_glaze(service, human)
    env = {**direct_env(test_settings, tmp_path)}
    rc, out, err, _ = run_cli(
        env, "read", "zorblax kiln", "--subject", human.subject, "--budget", "5"
    )
    assert rc == 0, err
    hint = next(line for line in err.splitlines() if "needs --budget" in line)
    assert hint.startswith("read: nothing fits in --budget 5: the best-ranked root left out")
    need = int(hint.split("needs --budget ")[1].split()[0])
    rc, out, err, _ = run_cli(
        env, "read", "zorblax kiln", "--subject", human.subject, "--budget", str(need)
    )
    assert rc == 0, err
    assert "1280 degrees" in out
