"""Settings in sections: one flat name per setting, projections filled by name.

Every setting keeps its flat ``GRAPHSVC_*`` name through one map to its section. A
use case's limits are a section as it is or a dataclass :func:`fill` takes from
sections by field name; a field that silently fell back to its default because its
setting was renamed would change behaviour without an error, so these tests pin
which fields of each projection come from which section and that a missing one
fails loudly.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import pytest

from graphsvc.api.document_limits import DocumentLimits
from graphsvc.core.write_plan import Limits
from graphsvc.errors import InvalidInputError
from graphsvc.ops.inspect import InspectLimits
from graphsvc.ops.read import ReadLimits
from graphsvc.ops.search import SearchLimits
from graphsvc.ops.write import limits_from_settings
from graphsvc.settings import ENTITY_WEIGHTS_OFF, NAMES, RankingSettings, Settings, fill


@dataclass(frozen=True)
class _Probe:
    max_depth: int
    doubled: int
    absent_with_default: str = "kept"


def _names_of(section: Any) -> set[str]:
    return {f.name for f in fields(section)}


@pytest.mark.req("DOC-1")
def test_every_setting_has_one_flat_name_and_one_place() -> None:
    settings = Settings()
    places = set(NAMES.values())
    assert len(places) == len(NAMES)
    for section in fields(settings):
        for field in fields(getattr(settings, section.name)):
            assert (section.name, field.name) in places, (section.name, field.name)
    assert NAMES["neo4j_uri"] == ("neo4j", "uri")
    assert NAMES["max_batch_changes"] == ("write", "max_changes")
    assert NAMES["job_max_attempts"] == ("jobs", "max_attempts")
    # The environment and with_ speak the flat names; reads go through the section.
    env = {"GRAPHSVC_NEO4J_URI": "bolt://h:1", "GRAPHSVC_MAX_QUERY_TOKENS": "7"}
    read = Settings.from_env(env, job_poll_s="2.5")
    assert (read.neo4j.uri, read.graphql.max_tokens, read.jobs.poll_s) == ("bolt://h:1", 7, 2.5)
    assert read.with_(neo4j_uri="").neo4j.managed and not read.neo4j.managed
    with pytest.raises(TypeError):
        settings.with_(uri="bolt://h:1")  # a field's own name is not a setting's
    with pytest.raises(InvalidInputError):
        RankingSettings(propagation=1.0)  # a section checks its values when built


@pytest.mark.req("DOC-1")
def test_a_bad_value_names_its_variable_and_what_it_must_be() -> None:
    cases = {
        "GRAPHSVC_PROPAGATION": ("1", "must be in [0, 1)"),
        "GRAPHSVC_LEXICAL_PROXIMITY": ("33", "must be in 0..32"),
        "GRAPHSVC_LINK_WEIGHTING": ("x", "must be role, out, in or sym"),
        "GRAPHSVC_ENTITY_WEIGHT": ("nan", "must be in [0, 100]"),
        "GRAPHSVC_MAX_BATCH_CHANGES": ("0", "must be positive"),
        "GRAPHSVC_VECTOR_EXACT_MAX": ("-1", "must be >= 0"),
        "GRAPHSVC_MAX_NODES": ("many", "='many' is not a valid int"),
        "GRAPHSVC_GRAPH_FIRST_DEFAULT": ("101", "must be in 0..graph_first_max"),
        "GRAPHSVC_SERVER_URL": ("127.0.0.1", "must start with http:// or https://"),
    }
    for variable, (raw, message) in cases.items():
        with pytest.raises(InvalidInputError) as caught:
            Settings.from_env({variable: raw})
        assert str(caught.value.message) == variable + ("" if message[0] == "=" else " ") + (
            message
        ), variable


@pytest.mark.req("DOC-1")
def test_a_projection_takes_fields_by_name_and_the_rest_from_the_caller() -> None:
    ranking = Settings().with_(max_depth=5).ranking
    probe = fill(_Probe, ranking, doubled=10)
    assert probe == _Probe(max_depth=5, doubled=10, absent_with_default="kept")
    # A given value wins over the field of the same name; the first section wins.
    assert fill(_Probe, ranking, max_depth=1, doubled=2).max_depth == 1
    other = RankingSettings(max_depth=9)
    assert fill(_Probe, other, ranking, doubled=0).max_depth == 9


@pytest.mark.req("DOC-1")
def test_a_field_neither_in_a_section_nor_given_fails_loudly() -> None:
    with pytest.raises(TypeError):
        fill(_Probe, Settings().ranking)


@pytest.mark.req("DOC-1")
def test_every_projected_limit_comes_from_its_sections() -> None:
    s = Settings()
    given = {"ranking", "cursors"}
    projections = {
        ReadLimits: [s.read, s.lifetimes],
        SearchLimits: [s.read],
        InspectLimits: [s.read, s.lifetimes],
        DocumentLimits: [s.graphql, s.read],
    }
    renamed = {"max_depth", "max_retrieval_depth"}  # DocumentLimits' two depths
    for cls, sections in projections.items():
        names = {f.name for f in fields(cls)} - given
        if cls is DocumentLimits:
            names -= renamed
        known = set().union(*(_names_of(x) for x in sections))
        assert names <= known, (cls.__name__, names - known)
    assert {f.name for f in fields(Limits)} == _names_of(s.write)

    settings = s.with_(propagation=0.42, entity_weight=2.5, entities="off", max_nodes=33)
    assert settings.ranking.entity_hops is False and s.ranking.entity_hops is True
    read = ReadLimits.from_settings(settings.with_(max_read_budget=1234))
    assert read.max_read_budget == 1234 and read.ranking.propagation == 0.42
    assert read.ranking.max_nodes == 33
    doc = DocumentLimits.from_settings(s.with_(max_query_depth=3, max_depth=7, search_limit=4))
    assert (doc.max_depth, doc.max_retrieval_depth, doc.search_limit) == (3, 7, 4)
    assert limits_from_settings(s.with_(max_links_per_atom=3)).max_links == 3


@pytest.mark.req("SIG-4")
def test_the_key_ring_and_secret_paths_are_decided_by_the_settings_alone(tmp_path: Path) -> None:
    from graphsvc.runtime import signing_key_path

    default = Settings().with_(state_dir=tmp_path).paths
    assert default.signing_key_path == tmp_path / "signing-key.json"
    assert default.secret_path == tmp_path / "server-secret"
    chosen = Settings().with_(
        state_dir=tmp_path, key_file=str(tmp_path / "k.json"), secret_file=str(tmp_path / "s")
    )
    assert chosen.paths.signing_key_path == tmp_path / "k.json"
    assert chosen.paths.secret_path == tmp_path / "s"
    # The composition root, the only module that finds the key file, reads the same.
    assert signing_key_path(chosen) == chosen.paths.signing_key_path


@pytest.mark.req("ENT-4")
def test_entity_weights_off_zeroes_every_entity_weight_and_nothing_else() -> None:
    weights = {
        f.name
        for f in fields(RankingSettings)
        if f.name.startswith("entity_") and f.name.endswith("weight")
    }
    assert set(ENTITY_WEIGHTS_OFF) == weights
    off = Settings.from_env({}).with_(**ENTITY_WEIGHTS_OFF)
    assert all(getattr(off.ranking, name) == 0.0 for name in weights)
    assert off.ranking.entities == "rules"  # the index stays; only its weights go


@pytest.mark.req("ACT-7")
def test_role_weights_are_parsed_once_when_the_settings_are_read() -> None:
    ranking = Settings().with_(role_weights="part=2:0, cites=0.5").ranking
    assert dict(ranking.role_table) == {"part": (2.0, 0.0), "cites": (0.5, 0.5)}
    assert ranking.role_table is ranking.role_table  # parsed once, not per evaluation
    for bad in ("part=x", "part=1:-1", "part=inf"):
        with pytest.raises(InvalidInputError, match="GRAPHSVC_ROLE_WEIGHTS"):
            Settings().with_(role_weights=bad)
