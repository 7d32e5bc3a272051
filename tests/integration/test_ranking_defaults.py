"""The ranking defaults chosen on LoCoMo (docs/search-quality.md), through real searches.

The default propagation (0.3) is the one the service applies, the reference
implementation's 0.5 stays selectable, and the proximity clause makes neighbouring
query terms count within one body's BM25 score (ACT-1), without changing the rule.
"""

from __future__ import annotations

import uuid

import pytest

from graphsvc.core.activation import DEFAULT_PROPAGATION
from graphsvc.core.binding import Binding
from graphsvc.core.requests import SearchRequest
from graphsvc.inputs.models import parse_changes
from graphsvc.runtime import service_for
from graphsvc.service import Service
from graphsvc.settings import ENTITY_WEIGHTS_OFF, Settings


def _subject(
    service: Service, texts: dict[str, str], links: bool = False
) -> tuple[Binding, dict[str, str]]:
    binding = Binding(f"t-defaults-{uuid.uuid4().hex[:10]}", "default", "human", "alice")
    changes = []
    for i, (key, text) in enumerate(texts.items()):
        to = []
        if links and i > 0:
            first = next(iter(texts))
            to = [{"role": "follows", "target": {"local": first, "at": "logical"}}]
        changes.append(
            {"id": key, "op": "create", "content": {"text": text, "links": to}, "sources": []}
        )
    outcome = service.write(binding, parse_changes(changes))
    return binding, {key: outcome.changes[key].atom_id for key in texts}


def test_the_shipped_defaults() -> None:
    defaults = Settings.from_env({})
    assert (
        defaults.ranking.propagation,
        defaults.ranking.lexical_proximity,
        defaults.ranking.beta,
    ) == (0.3, 3, 0.3)
    # The entity index and in-fan link weighting ship together with that propagation.
    assert (
        defaults.ranking.entities,
        defaults.ranking.entity_weight,
        defaults.ranking.link_weighting,
    ) == (
        "rules",
        4.0,
        "in",
    )
    # The three best matches seed the entities they share with other heads, each
    # with its own base activation (anchor entities, docs/search-quality.md).
    assert (defaults.ranking.entity_anchors, defaults.ranking.entity_anchor_weight) == (3, 1.0)
    # The lexical signal: the subject's own BM25 of every candidate, ÷ the best; the
    # vector leg: an exact scan for subjects up to 2,000 bodies (docs/search-quality.md).
    assert (
        defaults.ranking.lexical_statistics,
        defaults.ranking.lexical_normalisation,
        defaults.ranking.lexical_pool,
        defaults.ranking.lexical_scope,
        defaults.ranking.vector_exact_max,
    ) == ("subject", "max", 256, "candidates", 2000)
    # The reference implementation's value stays the core's constant and a setting.
    assert DEFAULT_PROPAGATION == 0.5
    assert Settings.from_env({"GRAPHSVC_PROPAGATION": "0.5"}).ranking.propagation == 0.5


@pytest.mark.req("ACT-3", "ACT-4")
@pytest.mark.parametrize("propagation", [None, 0.5])
def test_two_linked_atoms_satisfy_the_linear_system_with_the_configured_propagation(
    service: Service, test_settings: Settings, propagation: float | None
) -> None:
    # §5 as written: the entity index out of the graph (its weights 0, ENT-4).
    sec5 = test_settings.with_(**ENTITY_WEIGHTS_OFF)
    svc = service_for(
        sec5 if propagation is None else sec5.with_(propagation=propagation),
        service.db,
        service.embedder,
        service.tokenizer,
    )
    p = svc.settings.ranking.propagation
    binding, ids = _subject(
        svc,
        {
            "a": "Limestone caves form where rainwater dissolves calcite over millennia.",
            "b": "Stalactites hang from cave ceilings, dripping mineral-rich water.",
        },
        links=True,
    )
    result = svc.search(binding, SearchRequest("limestone caves dissolving calcite", depth=1))
    by = {h.atom.atom_id: h for h in result.hits}
    a, b = by[ids["a"]], by[ids["b"]]
    # One link b→a gives each atom one out-edge of weight 1, so with s = a/Σa:
    # s_a − p·s_b ∝ base_a and s_b − p·s_a ∝ base_b (ACT-3, ACT-4).
    lhs = (a.score - p * b.score) * b.breakdown["base"]
    rhs = (b.score - p * a.score) * a.breakdown["base"]
    assert lhs == pytest.approx(rhs, rel=1e-4, abs=1e-9)
    assert result.diagnostics["evaluation"]["propagation"] == p


@pytest.mark.req("ACT-1")
def test_neighbouring_query_terms_raise_a_bodys_lexical_score(
    service: Service, test_settings: Settings
) -> None:
    tag = uuid.uuid4().hex[:6]
    texts = {
        # The same words, as many of them, in the same body length: only where the
        # two query words stand differs.
        "near": f"the support group met at noon by the river {tag}",
        "far": f"the support came at noon by the river group {tag}",
    }
    binding, ids = _subject(service, texts)
    plain = service_for(
        test_settings.with_(lexical_proximity=0), service.db, service.embedder, service.tokenizer
    )
    query = "support group"

    def lexical(svc: Service) -> dict[str, float]:
        hits = svc.search(binding, SearchRequest(query, depth=0)).hits
        return {
            key: next(h.breakdown["lexical"] for h in hits if h.atom.atom_id == aid)
            for key, aid in ids.items()
        }

    without = lexical(plain)
    assert without["near"] == pytest.approx(without["far"])
    with_proximity = lexical(service)
    assert service.settings.ranking.lexical_proximity == 3
    assert with_proximity["near"] == 1.0
    assert with_proximity["far"] < 1.0
