"""Settings.section: a use case's limits filled from the settings of the same names.

A field that silently fell back to its default because its setting was renamed
would change behaviour without an error; these tests pin which fields of each
projection come from settings and that a missing one fails loudly.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import pytest

from graphsvc.ops.evaluate import EvaluationLimits
from graphsvc.ops.read import ReadLimits
from graphsvc.settings import Settings

SETTING_NAMES = {f.name for f in fields(Settings)}


@dataclass(frozen=True)
class _Probe:
    max_depth: int
    doubled: int
    absent_with_default: str = "kept"


@pytest.mark.req("DOC-1")
def test_a_section_takes_settings_by_name_and_the_rest_from_the_caller() -> None:
    settings = Settings().with_(max_depth=5)
    probe = settings.section(_Probe, doubled=10)
    assert probe == _Probe(max_depth=5, doubled=10, absent_with_default="kept")
    # A given value wins over the setting of the same name.
    assert settings.section(_Probe, max_depth=1, doubled=2).max_depth == 1


@pytest.mark.req("DOC-1")
def test_a_field_neither_a_setting_nor_given_fails_loudly() -> None:
    with pytest.raises(TypeError):
        Settings().section(_Probe)


@pytest.mark.req("DOC-1")
def test_every_evaluation_and_read_limit_is_a_setting_of_its_name() -> None:
    computed = {"entities", "evaluation", "cursors"}
    for cls in (EvaluationLimits, ReadLimits):
        names = {f.name for f in fields(cls)}
        assert names - computed <= SETTING_NAMES, (cls.__name__, names - SETTING_NAMES)
    settings = Settings().with_(propagation=0.42, entity_weight=2.5, entities="off")
    lim = EvaluationLimits.from_settings(settings)
    assert lim.propagation == 0.42 and lim.entity_weight == 2.5 and lim.entities is False
    assert EvaluationLimits.from_settings(Settings()).entities is (Settings().entities != "off")
    read = ReadLimits.from_settings(settings.with_(max_read_budget=1234))
    assert read.max_read_budget == 1234 and read.evaluation.propagation == 0.42


@pytest.mark.req("SIG-4")
def test_the_key_ring_and_secret_paths_are_decided_by_the_settings_alone(tmp_path: Path) -> None:
    from graphsvc.runtime import signing_key_path

    default = Settings().with_(state_dir=tmp_path)
    assert default.signing_key_path == tmp_path / "signing-key.json"
    assert default.secret_path == tmp_path / "server-secret"
    chosen = default.with_(key_file=str(tmp_path / "k.json"), secret_file=str(tmp_path / "s"))
    assert chosen.signing_key_path == tmp_path / "k.json"
    assert chosen.secret_path == tmp_path / "s"
    # The composition root, the only module that finds the key file, reads the same.
    assert signing_key_path(chosen) == chosen.signing_key_path
