"""Settings is the one reader of the environment: JAVA_HOME and the model flags too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from graphsvc.localdb.launcher import _find_java
from graphsvc.settings import Settings, offline_model_environment


def test_java_home_comes_from_java_home_and_graphsvc_java_home_wins() -> None:
    assert Settings.from_env({}).paths.java_home == ""
    assert Settings.from_env({"JAVA_HOME": "/opt/jdk"}).paths.java_home == "/opt/jdk"
    both = {"JAVA_HOME": "/opt/jdk", "GRAPHSVC_JAVA_HOME": "/opt/other"}
    assert Settings.from_env(both).paths.java_home == "/opt/other"


def test_the_launcher_runs_the_java_of_the_configured_home(tmp_path: Path) -> None:
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    java.write_text("#!/bin/sh\n")
    assert _find_java(str(tmp_path)) == str(java)
    # A home without bin/java falls back to java on PATH (whatever it is, not the home).
    empty = tmp_path / "nothing"
    empty.mkdir()
    try:
        found = _find_java(str(empty))
    except Exception as exc:  # no java on this machine's PATH
        assert getattr(exc, "code", None) == "JAVA_MISSING"
    else:
        assert not found.startswith(str(empty))


def test_offline_flags_are_set_once_and_keep_a_value_already_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
    offline_model_environment()
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert os.environ["TRANSFORMERS_OFFLINE"] == "0"
    assert os.environ["TOKENIZERS_PARALLELISM"] == "false"


def test_an_override_wins_over_the_same_setting_in_the_environment() -> None:
    env = {"GRAPHSVC_NEO4J_URI": "bolt://env:7687", "GRAPHSVC_PROPAGATION": "0.2"}
    s = Settings.from_env(env, neo4j_uri="bolt://override:7687")
    assert s.neo4j.uri == "bolt://override:7687"
    assert s.ranking.propagation == 0.2
