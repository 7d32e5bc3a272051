"""``search`` end to end: real Neo4j, real embeddings, a corpus of 200+ atoms.

The corpus is written once per module in its own subject: short factual atoms
generated from templates over fifteen topics, plus a few hand-made atoms that the
tests aim at (a paraphrase target, a rare made-up token, a linked pair, an atom
whose embedding goes missing, archived and half-archived atoms). Tests that change
state (usage, flags) use their own atoms or their own policy, so they do not
depend on the order they run in.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from neo4j import RoutingControl

from graphsvc.core.binding import Binding
from graphsvc.core.requests import SearchRequest
from graphsvc.core.write_models import AtomRef
from graphsvc.errors import (
    CursorExpiredError,
    CursorInvalidError,
    DependencyInvalidError,
    PurgePendingError,
)
from graphsvc.inputs.models import parse_changes
from graphsvc.ops.evaluate import Evaluation, evaluate
from graphsvc.ops.search import SearchResult
from graphsvc.process_state.head_mirrors import forget_mirrors
from graphsvc.runtime import service_for
from graphsvc.service import Service

# ----------------------------------------------------------------------------- corpus

_RIVERS = [
    ("Nile", "Egypt", 6650), ("Amazon", "Brazil", 6400), ("Danube", "Austria", 2850),
    ("Mississippi", "the United States", 3730), ("Yangtze", "China", 6300),
    ("Ganges", "India", 2525), ("Volga", "Russia", 3530), ("Rhine", "Germany", 1230),
    ("Mekong", "Laos", 4900), ("Zambezi", "Zambia", 2574), ("Murray", "Australia", 2508),
    ("Thames", "England", 346), ("Loire", "France", 1006), ("Tagus", "Portugal", 1007),
]  # fmt: skip
_ANIMALS = [
    ("owl", "birds", "mice and insects"), ("dolphin", "mammals", "fish and squid"),
    ("camel", "mammals", "desert plants"), ("penguin", "birds", "krill and fish"),
    ("koala", "marsupials", "eucalyptus leaves"), ("panda", "mammals", "bamboo"),
    ("crocodile", "reptiles", "fish and large prey"), ("frog", "amphibians", "insects"),
    ("shark", "fish", "seals and fish"), ("bee", "insects", "nectar and pollen"),
    ("giraffe", "mammals", "acacia leaves"), ("hedgehog", "mammals", "beetles and worms"),
    ("octopus", "molluscs", "crabs"), ("hummingbird", "birds", "flower nectar"),
]  # fmt: skip
_ELEMENTS = [
    ("hydrogen", 1), ("helium", 2), ("carbon", 6), ("nitrogen", 7), ("oxygen", 8),
    ("sodium", 11), ("aluminium", 13), ("silicon", 14), ("iron", 26), ("copper", 29),
    ("silver", 47), ("tin", 50), ("gold", 79), ("uranium", 92),
]  # fmt: skip
_LANGUAGES = [
    ("Python", 1991), ("Java", 1995), ("C", 1972), ("Rust", 2015), ("Go", 2009),
    ("Haskell", 1990), ("Ruby", 1995), ("Fortran", 1957), ("Lisp", 1958), ("Kotlin", 2011),
    ("Swift", 2014), ("Erlang", 1986), ("Perl", 1987), ("Scala", 2004),
]  # fmt: skip
_MOONS = [
    ("Io", "Jupiter"), ("Europa", "Jupiter"), ("Ganymede", "Jupiter"), ("Callisto", "Jupiter"),
    ("Titan", "Saturn"), ("Enceladus", "Saturn"), ("Mimas", "Saturn"), ("Triton", "Neptune"),
    ("Phobos", "Mars"), ("Deimos", "Mars"), ("Miranda", "Uranus"), ("Oberon", "Uranus"),
    ("Charon", "Pluto"), ("Titania", "Uranus"),
]  # fmt: skip
_INSTRUMENTS = [
    ("violin", "string", "classical"), ("cello", "string", "chamber"),
    ("trumpet", "brass", "jazz"), ("trombone", "brass", "big band"),
    ("flute", "woodwind", "orchestral"), ("clarinet", "woodwind", "klezmer"),
    ("banjo", "string", "bluegrass"), ("sitar", "string", "Hindustani"),
    ("bagpipes", "wind", "Scottish folk"), ("tabla", "percussion", "Indian classical"),
    ("accordion", "free-reed", "tango"), ("harp", "string", "Celtic"),
    ("marimba", "percussion", "Central American"), ("didgeridoo", "wind", "Aboriginal"),
]  # fmt: skip
_DISHES = [
    ("Paella", "Spain", "rice and saffron"), ("Sushi", "Japan", "vinegared rice and raw fish"),
    ("Pierogi", "Poland", "dough dumplings"), ("Goulash", "Hungary", "beef and paprika"),
    ("Pho", "Vietnam", "rice noodles and broth"), ("Tacos", "Mexico", "corn tortillas"),
    ("Moussaka", "Greece", "aubergine and lamb"), ("Feijoada", "Brazil", "black beans and pork"),
    ("Kimchi", "Korea", "fermented cabbage"), ("Falafel", "Lebanon", "ground chickpeas"),
    ("Risotto", "Italy", "arborio rice"), ("Borscht", "Ukraine", "beetroot"),
    ("Haggis", "Scotland", "sheep offal and oats"), ("Injera", "Ethiopia", "teff flour"),
]  # fmt: skip
_SPORTS = [
    ("Football", 11), ("Basketball", 5), ("Volleyball", 6), ("Ice hockey", 6),
    ("Rugby union", 15), ("Water polo", 7), ("Handball", 7), ("Baseball", 9), ("Cricket", 11),
    ("Netball", 7), ("Field hockey", 11), ("Lacrosse", 10), ("Polo", 4), ("Korfball", 8),
]  # fmt: skip
_CITIES = [
    ("Tokyo", "Japan"), ("Cairo", "Egypt"), ("Lima", "Peru"), ("Oslo", "Norway"),
    ("Nairobi", "Kenya"), ("Hanoi", "Vietnam"), ("Ottawa", "Canada"), ("Canberra", "Australia"),
    ("Santiago", "Chile"), ("Reykjavik", "Iceland"), ("Warsaw", "Poland"),
    ("Manila", "the Philippines"), ("Dakar", "Senegal"), ("Tbilisi", "Georgia"),
]  # fmt: skip
_INVENTIONS = [
    ("telephone", "Alexander Graham Bell", 1876), ("light bulb", "Thomas Edison", 1879),
    ("printing press", "Johannes Gutenberg", 1440), ("steam engine", "James Watt", 1769),
    ("radio", "Guglielmo Marconi", 1895), ("dynamite", "Alfred Nobel", 1867),
    ("telescope", "Hans Lippershey", 1608), ("cotton gin", "Eli Whitney", 1793),
    ("phonograph", "Thomas Edison", 1877), ("revolver", "Samuel Colt", 1836),
    ("lightning rod", "Benjamin Franklin", 1752), ("safety pin", "Walter Hunt", 1849),
    ("jet engine", "Frank Whittle", 1930), ("World Wide Web", "Tim Berners-Lee", 1989),
]  # fmt: skip
_MOUNTAINS = [
    ("Everest", "Nepal", 8849), ("Kilimanjaro", "Tanzania", 5895), ("Denali", "Alaska", 6190),
    ("Aconcagua", "Argentina", 6961), ("Mont Blanc", "the Alps", 4806),
    ("Elbrus", "Russia", 5642), ("Fuji", "Japan", 3776), ("Matterhorn", "Switzerland", 4478),
    ("Olympus", "Greece", 2917), ("Kosciuszko", "Australia", 2228), ("Ararat", "Turkey", 5137),
    ("Vinson", "Antarctica", 4892), ("Rainier", "Washington State", 4392),
    ("Ben Nevis", "Scotland", 1345),
]  # fmt: skip
_PAINTERS = [
    ("Vincent van Gogh", "The Starry Night"), ("Leonardo da Vinci", "the Mona Lisa"),
    ("Pablo Picasso", "Guernica"), ("Claude Monet", "Water Lilies"),
    ("Edvard Munch", "The Scream"), ("Johannes Vermeer", "Girl with a Pearl Earring"),
    ("Sandro Botticelli", "The Birth of Venus"), ("Rembrandt", "The Night Watch"),
    ("Frida Kahlo", "The Two Fridas"), ("Salvador Dali", "The Persistence of Memory"),
    ("Katsushika Hokusai", "The Great Wave off Kanagawa"), ("Grant Wood", "American Gothic"),
    ("Gustav Klimt", "The Kiss"), ("Diego Velazquez", "Las Meninas"),
]  # fmt: skip
_ORGANS = [
    ("heart", "pumps blood through the body"), ("liver", "filters toxins from the blood"),
    ("lungs", "exchange oxygen and carbon dioxide"),
    ("kidneys", "produce urine from blood plasma"), ("stomach", "digests food with acid"),
    ("pancreas", "releases insulin"), ("skin", "protects the body from infection"),
    ("spleen", "recycles old red blood cells"),
    ("thyroid", "regulates metabolism with hormones"),
    ("brain", "controls thought and movement"),
    ("small intestine", "absorbs nutrients from food"), ("bladder", "stores urine"),
    ("eyes", "focus light onto the retina"), ("cochlea", "turns sound into nerve signals"),
]  # fmt: skip
_TREES = [
    ("oak", "acorns"), ("maple", "winged samaras"), ("pine", "woody cones"),
    ("coconut palm", "coconuts"), ("apple tree", "apples"), ("baobab", "large dry pods"),
    ("ginkgo", "foul-smelling seeds"), ("horse chestnut", "conkers"), ("walnut", "walnuts"),
    ("olive tree", "olives"), ("date palm", "dates"), ("birch", "tiny winged nutlets"),
    ("yew", "red arils"), ("cedar", "upright cones"),
]  # fmt: skip
_UNITS = [
    ("metre", "length"), ("kilogram", "mass"), ("second", "time"),
    ("ampere", "electric current"), ("kelvin", "temperature"), ("mole", "amount of substance"),
    ("candela", "luminous intensity"), ("newton", "force"), ("joule", "energy"),
    ("watt", "power"), ("pascal", "pressure"), ("volt", "electric potential"),
    ("ohm", "electrical resistance"), ("hertz", "frequency"),
]  # fmt: skip


def _evaluate(service: Service, binding: Binding, query: str) -> Evaluation:
    """One depth-2 evaluation, as search and read make it."""
    return evaluate(
        service.db,
        service.embedder,
        service.clock,
        service.settings.ranking,
        binding,
        query,
        depth=2,
        include_archived=False,
    )


def _generated_texts() -> list[str]:
    """210 short factual sentences, 14 per topic, all distinct."""
    return [
        *(f"The {n} river flows through {c} and is about {k} km long." for n, c, k in _RIVERS),
        *(f"The {a} belongs to the {c} and mostly eats {f}." for a, c, f in _ANIMALS),
        *(f"The chemical element {e} has atomic number {z}." for e, z in _ELEMENTS),
        *(f"{name} is a programming language first released in {y}." for name, y in _LANGUAGES),
        *(f"{m} is one of the moons that orbit {p}." for m, p in _MOONS),
        *(f"The {i} is a {f} instrument often heard in {g} music." for i, f, g in _INSTRUMENTS),
        *(f"{d} is a traditional dish from {c} made mainly with {i}." for d, c, i in _DISHES),
        *(f"{s} is played with {n} players per side on the field." for s, n in _SPORTS),
        *(f"{c} is the capital city of {k}." for c, k in _CITIES),
        *(f"The {i} was invented by {p} in {y}." for i, p, y in _INVENTIONS),
        *(f"Mount {m} in {w} rises to {h} metres above sea level." for m, w, h in _MOUNTAINS),
        *(f"{p} painted {w}." for p, w in _PAINTERS),
        *(f"In the human body the {o} {f}." for o, f in _ORGANS),
        *(f"The {t} is a tree that bears {f}." for t, f in _TREES),
        *(f"The {u} is the SI unit of {q}." for u, q in _UNITS),
    ]  # fmt: skip


# Hand-made atoms the tests aim at (change id -> text).
_SPECIAL = {
    # ACT-1: no word in common with the paraphrased query below.
    "exercise": "Regular physical exercise lowers the risk of heart disease.",
    # ACT-1 lexical: a made-up token that exists in no other atom.
    "zorblax": "Engineers coated the relay housing with zorblax to stop corrosion.",
    # ACT-3: quokka links to form; form matches nothing a quokka query asks.
    "quokka": "Quokkas are small smiling marsupials that live on Rottnest Island.",
    "form": "Form 27-B must be signed in blue ink before the quarterly audit.",
    # ACT-1 missing signal: its embedding is removed by the test.
    "glimmer": "The glimmerquartz crystal hums at a low pitch when it is warmed.",
    # ATM-6: an archived parent, a summary linking to it, and two half-states.
    "parent": "Ledger of the flumberwick harvest, since split into smaller atoms.",
    "summary": "Summary of the flumberwick harvest for the co-operative.",
    "half_split": "The snorkelplume reed was counted twice in the spring survey.",
    "half_stamp": "The snorkelplume reed grows only in brackish water.",
    # LNK-1: retired by the test.
    "retired": "The plonkwhistle valve on the old boiler was replaced last winter.",
}
_LINKS = {"quokka": "form", "summary": "parent"}

PARAPHRASE = "Does working out keep your cardiovascular system healthy?"
FULL = 10_000
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Corpus:
    subject: str
    binding: Binding
    ids: dict[str, str]  # change id -> atomId

    def key_of(self, atom_id: str) -> str:
        return next(k for k, v in self.ids.items() if v == atom_id)


def _create(cid: str, text: str, links: list[str] | None = None) -> dict[str, Any]:
    return {
        "id": cid,
        "op": "create",
        "content": {
            "text": text,
            "links": [{"role": "see-also", "target": {"local": t}} for t in links or []],
        },
        "sources": [],
    }


@pytest.fixture(scope="module")
def corpus(service: Service) -> Corpus:
    subject = f"t-search-{uuid.uuid4().hex[:10]}"
    binding = Binding(subject, "default", "human", "alice")
    texts = _generated_texts()
    changes = [_create(f"g{i:03d}", t) for i, t in enumerate(texts)]
    changes += [
        _create(cid, text, [_LINKS[cid]] if cid in _LINKS else None)
        for cid, text in _SPECIAL.items()
    ]
    assert len(changes) >= 200
    outcome = service.write(binding, parse_changes(changes))
    assert outcome.indexing == "complete"
    return Corpus(subject, binding, {cid: v.atom_id for cid, v in outcome.changes.items()})


# ----------------------------------------------------------------------------- helpers


def _full(service: Service, binding: Binding, query: str, **options: Any) -> SearchResult:
    result: SearchResult = service.search(binding, SearchRequest(query, limit=FULL, **options))
    assert result.cursor is None
    return result


def _ids(result: SearchResult) -> list[str]:
    return [h.atom.atom_id for h in result.hits]


def _breakdown(result: SearchResult, atom_id: str) -> dict[str, Any]:
    return next(h.breakdown for h in result.hits if h.atom.atom_id == atom_id)


def _set_flags(service: Service, subject: str, atom_id: str, props: dict[str, Any]) -> None:
    """Set archive flags on an atom's head revision directly, as the atomiser would."""
    service.db.driver.execute_query(
        "MATCH (:Atom {subject: $s, atomId: $a})-[:HEAD]->(r:Revision) SET r += $props",
        {"s": subject, "a": atom_id, "props": props},
        database_=service.db.database,
        routing_=RoutingControl.WRITE,
    )
    forget_mirrors(service.db)  # a direct edit moves no generation the mirrors follow


def _usage_states(service: Service, subject: str, policy: str) -> dict[str, str]:
    records, _, _ = service.db.driver.execute_query(
        "MATCH (u:UsageState {subject: $s, policy: $p}) RETURN u.atomId AS a, u.state AS st",
        {"s": subject, "p": policy},
        database_=service.db.database,
        routing_=RoutingControl.READ,
    )
    return {r["a"]: r["st"] for r in records}


def _dump(service: Service, subject: str) -> str:
    """Every property of the subject's atoms, revisions, usage state and events,
    and of the relationships among them, as one canonical JSON string."""
    records, _, _ = service.db.driver.execute_query(
        """
        MATCH (n {subject: $s})
        WHERE n:Atom OR n:Revision OR n:UsageState OR n:UsageEvent
        OPTIONAL MATCH (n)-[r]->(m)
        WITH n, collect(CASE WHEN r IS NULL THEN null ELSE
          {type: type(r), props: properties(r), to: labels(m), toAtom: m.atomId, toRev: m.rev}
          END) AS rels
        RETURN labels(n) AS labels, properties(n) AS props, rels
        """,
        {"s": subject},
        database_=service.db.database,
        routing_=RoutingControl.READ,
    )
    rows = [
        json.dumps(
            {
                "labels": sorted(r["labels"]),
                "props": r["props"],
                "rels": sorted(json.dumps(x, sort_keys=True, default=str) for x in r["rels"]),
            },
            sort_keys=True,
            default=str,
        )
        for r in records
    ]
    return "\n".join(sorted(rows))


# ----------------------------------------------------------------------------- ranking


@pytest.mark.req("ACT-1")
def test_paraphrased_query_finds_the_atom_first_by_semantics(
    service: Service, corpus: Corpus
) -> None:
    result = service.search(corpus.binding, SearchRequest(PARAPHRASE))
    top = result.hits[0]
    assert top.atom.atom_id == corpus.ids["exercise"]
    # No word in common: the atom won on the semantic signal alone.
    assert top.breakdown["lexical"] == 0.0
    assert top.breakdown["semantic"] == max(h.breakdown["semantic"] or 0 for h in result.hits)
    assert top.breakdown["match"] == pytest.approx(0.8 * top.breakdown["semantic"])


@pytest.mark.req("ACT-1")
def test_rare_keyword_is_found_lexically_with_lexical_one(service: Service, corpus: Corpus) -> None:
    result = service.search(corpus.binding, SearchRequest("zorblax"))
    assert result.hits[0].atom.atom_id == corpus.ids["zorblax"]
    bd = result.hits[0].breakdown
    assert bd["lexical"] == 1.0
    assert bd["match"] == pytest.approx(0.8 * bd["semantic"] + 0.2)
    assert result.diagnostics["acquisition"]["lexicalCandidates"] == 1
    # Every other candidate is no fulltext hit at all.
    assert all(h.breakdown["lexical"] in (0.0, None) for h in result.hits[1:])


@pytest.mark.req("ACT-1")
@pytest.mark.parametrize(
    "query",
    [
        'foo:bar (baz) AND "x',
        '"',
        "()",
        "\\",
        "*",
        "?",
        "[a TO z]",
        "{a TO z}",
        "&& || ! NOT OR",
        "/regex.*/",
        "term~2 ^3",
        "subject:other",
        "text:(zorblax) OR subject:*",
        "+-",
    ],
)
def test_lucene_special_characters_never_error(
    service: Service, corpus: Corpus, query: str
) -> None:
    result = service.search(corpus.binding, SearchRequest(query, limit=FULL))
    acquisition = result.diagnostics["acquisition"]
    assert acquisition["queryEmbedding"] is True
    assert result.diagnostics["evaluation"]["converged"] is True
    # User text is never Lucene syntax (no field, wildcard, range or fuzzy query): a
    # lexical hit shares a plain word with the query.
    words = set(_WORD.findall(query.lower()))
    lexical_hits = [h for h in result.hits if (h.breakdown["lexical"] or 0.0) > 0.0]
    assert len(lexical_hits) <= acquisition["lexicalCandidates"]
    for hit in lexical_hits:
        assert words & set(_WORD.findall(hit.atom.text.lower())), (query, hit.atom.text)


@pytest.mark.req("ACT-1")
def test_query_of_only_special_characters_has_no_lexical_candidates(
    service: Service, corpus: Corpus
) -> None:
    for query in ('"', "()", "*", "&& || !", "\\", "+-/"):
        result = service.search(corpus.binding, SearchRequest(query))
        assert result.diagnostics["acquisition"]["lexicalCandidates"] == 0, query
        assert all(h.breakdown["lexical"] in (0.0, None) for h in result.hits), query


@pytest.mark.req("ACT-1")
def test_special_characters_around_a_keyword_still_find_it(
    service: Service, corpus: Corpus
) -> None:
    result = service.search(corpus.binding, SearchRequest('zorblax:(AND "'))
    assert result.hits[0].atom.atom_id == corpus.ids["zorblax"]
    assert result.hits[0].breakdown["lexical"] == 1.0


@pytest.mark.req("ACT-3", "ACT-7")
def test_linked_neighbour_gains_score_through_propagation(service: Service, corpus: Corpus) -> None:
    query = "quokka marsupial on Rottnest Island"
    quokka, form = corpus.ids["quokka"], corpus.ids["form"]

    shallow = _full(service, corpus.binding, query, depth=0)
    assert shallow.hits[0].atom.atom_id == quokka
    assert form not in _ids(shallow)
    assert _breakdown(shallow, quokka)["propagatedShare"] == 0.0

    deep = _full(service, corpus.binding, query, depth=1)
    bd = _breakdown(deep, form)
    assert bd["match"] == 0.0 and bd["candidate"] is False and bd["base"] == 0.0
    score = next(h.score for h in deep.hits if h.atom.atom_id == form)
    assert score > 0.0
    assert bd["propagatedShare"] == pytest.approx(score)
    # The reverse edge brings some of it back to the matched atom (ACT-7).
    assert _breakdown(deep, quokka)["propagatedShare"] > 0.0
    assert deep.diagnostics["evaluation"]["edges"] >= 2


@pytest.mark.req("ACT-4")
def test_scores_of_a_full_result_sum_to_at_most_one_and_evaluation_to_one(
    service: Service, corpus: Corpus
) -> None:
    query = "quokka marsupial on Rottnest Island"
    result = _full(service, corpus.binding, query)
    total = sum(h.score for h in result.hits)
    assert 0.0 < total <= 1.0 + 1e-9
    assert all(h.score > 0.0 for h in result.hits)
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)

    ev = _evaluate(service, corpus.binding, query)
    assert math.fsum(ev.scores) == pytest.approx(1.0, abs=1e-9)
    assert total == pytest.approx(math.fsum(s for s in ev.scores if s > 0), abs=1e-9)


@pytest.mark.req("ACT-1")
def test_missing_embedding_is_ranked_lexically_and_named_in_diagnostics(
    service: Service, corpus: Corpus
) -> None:
    glimmer = corpus.ids["glimmer"]
    # Simulate an embedding that is still pending for this head revision.
    service.db.driver.execute_query(
        "MATCH (:Atom {subject: $s, atomId: $a})-[:HEAD]->(r:Revision) REMOVE r.embedding",
        {"s": corpus.subject, "a": glimmer},
        database_=service.db.database,
        routing_=RoutingControl.WRITE,
    )
    forget_mirrors(service.db)  # a direct edit moves no generation the mirrors follow
    result = service.search(corpus.binding, SearchRequest("glimmerquartz crystal"))
    assert result.hits[0].atom.atom_id == glimmer
    bd = result.hits[0].breakdown
    assert bd["semantic"] is None and bd["lexical"] == 1.0
    # The weights renormalise to the signal present: lexical alone with weight 1.
    assert bd["match"] == 1.0
    assert result.diagnostics["acquisition"]["missingSignals"] == {glimmer: ["semantic"]}


@pytest.mark.req("ACT-6")
def test_diagnostics_report_solver_iterations_residual_and_graph_size(
    service: Service, corpus: Corpus
) -> None:
    result = _full(service, corpus.binding, "quokka marsupial on Rottnest Island")
    ev = result.diagnostics["evaluation"]
    assert ev["solver"] in {"spsolve", "fixed-point"}
    assert isinstance(ev["iterations"], int) and ev["iterations"] >= 1
    assert 0.0 <= ev["residual"] <= 1e-6
    assert ev["converged"] is True
    # The graph's size counts the entity index's nodes too (ENT-4); they are never hits.
    entity_nodes = ev["entities"]["nodes"]
    assert ev["nodes"] - entity_nodes == len(result.hits) == result.diagnostics["page"]["total"]
    assert ev["edges"] >= 2
    assert set(result.diagnostics) >= {"acquisition", "evaluation"}


@pytest.mark.req("ACT-6")
def test_evaluation_work_limit_stops_the_solver_with_converged_false(
    service: Service, corpus: Corpus
) -> None:
    tight = service_for(
        service.settings.with_(evaluation_work=100),
        service.db,
        service.embedder,
        service.tokenizer,
    )
    result = _full(tight, corpus.binding, "quokka marsupial on Rottnest Island")
    ev = result.diagnostics["evaluation"]
    assert ev["converged"] is False
    assert ev["solver"] == "fixed-point"
    assert ev["residual"] > 1e-6
    assert ev["work"] <= 100
    assert sum(h.score for h in result.hits) == pytest.approx(1.0)


# ----------------------------------------------------------------------------- usage


@pytest.mark.req("ACT-2", "ACT-5", "AV-4")
def test_record_use_raises_usage_but_never_the_acquisition_order(
    service: Service, corpus: Corpus
) -> None:
    binding = Binding(corpus.subject, "usage-order", "agent", "bot")
    query = "Which moons orbit the planet Jupiter?"
    before = _full(service, binding, query)
    candidates = [h for h in before.hits if h.breakdown["candidate"]]
    used = candidates[3].atom
    assert before.hits[0].atom.atom_id != used.atom_id
    assert all(h.breakdown["usage"] == 0.0 for h in before.hits)

    out = service.record_use(binding, f"ev-{uuid.uuid4().hex}", {}, [used.ref])
    assert out.repeated is False and out.updated == 1
    after = _full(service, binding, query)

    bd = _breakdown(after, used.atom_id)
    assert bd["usage"] > 0.0
    assert 1.0 < bd["usageFactor"] <= 1.3
    # Depth 2 reads usage with the two-level expansion, depth 1 with
    # search/usage_states: the two statements of the rule agree.
    shallow = _breakdown(_full(service, binding, query, depth=1), used.atom_id)
    assert shallow["usage"] == pytest.approx(bd["usage"], rel=1e-3)
    assert bd["base"] == pytest.approx(bd["match"] * bd["usageFactor"])
    others = [h for h in after.hits if h.atom.atom_id != used.atom_id]
    assert all(h.breakdown["usage"] == 0.0 for h in others)

    def by_match(r: SearchResult) -> list[tuple[str, float]]:
        rows = [(h.atom.atom_id, h.breakdown["match"]) for h in r.hits if h.breakdown["candidate"]]
        return sorted(rows, key=lambda x: (-x[1], x[0]))

    assert by_match(after) == by_match(before)
    acq_before = {k: v for k, v in before.diagnostics["acquisition"].items() if k != "evaluatedAt"}
    acq_after = {k: v for k, v in after.diagnostics["acquisition"].items() if k != "evaluatedAt"}
    assert acq_after == acq_before
    score_before = next(h.score for h in before.hits if h.atom.atom_id == used.atom_id)
    score_after = next(h.score for h in after.hits if h.atom.atom_id == used.atom_id)
    assert score_after > score_before


@pytest.mark.req("AV-3")
def test_repeated_event_id_is_reported_and_not_applied_twice(
    service: Service, corpus: Corpus
) -> None:
    binding = Binding(corpus.subject, "usage-repeat", "agent", "bot")
    ref = AtomRef(corpus.ids["zorblax"], 1)
    event = f"ev-{uuid.uuid4().hex}"
    first = service.record_use(binding, event, {}, [ref])
    state = _usage_states(service, corpus.subject, "usage-repeat")
    assert first.to_json() == {"eventId": event, "repeated": False, "updated": 1}
    assert json.loads(state[ref.atom_id])["uses"] == 1

    again = service.record_use(binding, event, {}, [ref])
    assert again.to_json() == {"eventId": event, "repeated": True, "updated": 0}
    assert _usage_states(service, corpus.subject, "usage-repeat") == state


@pytest.mark.req("AV-3")
def test_usage_is_isolated_per_subject_and_policy(service: Service, corpus: Corpus) -> None:
    used = Binding(corpus.subject, "usage-iso", "agent", "bot")
    other_policy = Binding(corpus.subject, "usage-iso-other", "agent", "bot")
    ref = AtomRef(corpus.ids["zorblax"], 1)
    service.record_use(used, f"ev-{uuid.uuid4().hex}", {}, [ref])

    assert _breakdown(service.search(used, SearchRequest("zorblax")), ref.atom_id)["usage"] > 0.0
    seen_elsewhere = _breakdown(service.search(other_policy, SearchRequest("zorblax")), ref.atom_id)
    assert seen_elsewhere["usage"] == 0.0 and seen_elsewhere["usageFactor"] == 1.0

    # Another subject cannot even name the revision to record a use of it.
    stranger = Binding(f"t-{uuid.uuid4().hex[:12]}", "usage-iso", "agent", "bot")
    with pytest.raises(DependencyInvalidError):
        service.record_use(stranger, f"ev-{uuid.uuid4().hex}", {}, [ref])
    assert set(_usage_states(service, corpus.subject, "usage-iso")) == {ref.atom_id}


@pytest.mark.req("AV-3")
def test_reset_usage_clears_the_callers_usage_state(service: Service, corpus: Corpus) -> None:
    binding = Binding(corpus.subject, "usage-reset", "agent", "bot")
    keep = Binding(corpus.subject, "usage-reset-keep", "agent", "bot")
    ref = AtomRef(corpus.ids["zorblax"], 1)
    service.record_use(binding, f"ev-{uuid.uuid4().hex}", {}, [ref])
    service.record_use(keep, f"ev-{uuid.uuid4().hex}", {}, [ref])
    assert _breakdown(service.search(binding, SearchRequest("zorblax")), ref.atom_id)["usage"] > 0.0

    assert service.reset_usage(binding) == 1
    bd = _breakdown(service.search(binding, SearchRequest("zorblax")), ref.atom_id)
    assert bd["usage"] == 0.0 and bd["usageFactor"] == 1.0
    assert _usage_states(service, corpus.subject, "usage-reset") == {}
    # Only the caller's policy is reset.
    assert set(_usage_states(service, corpus.subject, "usage-reset-keep")) == {ref.atom_id}


SEARCH_GQL = """
query($q: String!, $depth: Int, $limit: Int, $arch: Boolean, $cursor: String) {
  search(query: $q, depth: $depth, limit: $limit, includeArchived: $arch, cursor: $cursor) {
    hits { atom { atomId rev text } score scoreBreakdown }
    diagnostics
    cursor
  }
}
"""


@pytest.mark.req("AV-4", "CORE-2")
def test_search_changes_no_body_link_or_usage_state(  # type: ignore[no-untyped-def]
    service: Service, corpus: Corpus, live_server
) -> None:
    binding = Binding(corpus.subject, "usage-core2", "agent", "bot")
    for key in ("quokka", "exercise", "zorblax"):
        service.record_use(binding, f"ev-{uuid.uuid4().hex}", {}, [AtomRef(corpus.ids[key], 1)])
    before = _dump(service, corpus.subject)
    assert '"UsageState"' in before

    # The used atoms are matched, reached by propagation, paged over and evaluated.
    queries = ["quokka marsupial on Rottnest Island", PARAPHRASE, "zorblax flumberwick"]
    for q in queries:
        for depth in (0, 2):
            service.search(binding, SearchRequest(q, depth=depth, limit=FULL))
        first = service.search(binding, SearchRequest(q, limit=3, include_archived=True))
        assert first.cursor is not None
        service.search(
            binding, SearchRequest(q, limit=3, include_archived=True, cursor=first.cursor)
        )
        _evaluate(service, binding, q)
    token = live_server.token_for(binding)
    for q in queries[:2]:
        body = live_server.gql(SEARCH_GQL, {"q": q, "limit": 4}, token=token)
        assert "errors" not in body, body
        nxt = body["data"]["search"]["cursor"]
        body = live_server.gql(SEARCH_GQL, {"q": q, "limit": 4, "cursor": nxt}, token=token)
        assert "errors" not in body, body

    assert _dump(service, corpus.subject) == before


# ----------------------------------------------------------------------------- cursors


@pytest.mark.req("CUR-1")
def test_pages_are_disjoint_and_together_equal_the_unpaged_ranking(
    service: Service, corpus: Corpus
) -> None:
    query = "Which river flows through which country?"
    unpaged = _full(service, corpus.binding, query)
    assert len(unpaged.hits) > 20

    pages: list[SearchResult] = [service.search(corpus.binding, SearchRequest(query, limit=7))]
    # A search that cannot be paged shows the same hits, each with its breakdown.
    one = service.search(corpus.binding, SearchRequest(query, limit=7, paged=False))
    assert one.cursor is None
    assert [(h.atom.atom_id, h.breakdown["match"]) for h in one.hits] == [
        (h.atom.atom_id, pytest.approx(h.breakdown["match"])) for h in pages[0].hits
    ]
    # CUR-1: later pages come from the frozen evaluation, not from a new one, so a
    # write that would rank first does not show up in them.
    service.write(
        corpus.binding,
        parse_changes([_create("new", "The Seine river flows through France to Paris.")]),
    )
    while pages[-1].cursor is not None:
        pages.append(
            service.search(corpus.binding, SearchRequest(query, limit=7, cursor=pages[-1].cursor))
        )
        assert len(pages) < 100

    paged = [(h.atom.atom_id, h.atom.rev) for p in pages for h in p.hits]
    assert all(1 <= len(p.hits) <= 7 for p in pages)
    assert len(set(paged)) == len(paged)
    assert paged == [(h.atom.atom_id, h.atom.rev) for h in unpaged.hits]
    assert [h.score for p in pages for h in p.hits] == pytest.approx(
        [h.score for h in unpaged.hits]
    )
    assert [p.diagnostics["page"]["offset"] for p in pages] == [7 * i for i in range(len(pages))]
    # Every page's hits carry their breakdown (a first page stores them all for later ones).
    assert [h.breakdown["match"] for p in pages for h in p.hits] == pytest.approx(
        [h.breakdown["match"] for h in unpaged.hits]
    )


@pytest.mark.req("CUR-2")
def test_cursor_with_another_query_options_or_binding_is_expired(
    service: Service, corpus: Corpus
) -> None:
    query = "Which chemical element has which atomic number?"
    first = service.search(corpus.binding, SearchRequest(query, limit=5))
    cursor = first.cursor
    assert cursor is not None
    second = service.search(corpus.binding, SearchRequest(query, limit=5, cursor=cursor))
    assert not {h.atom.atom_id for h in second.hits} & {h.atom.atom_id for h in first.hits}

    other_actor = Binding(corpus.subject, "default", "agent", "bot-2")
    other_policy = Binding(corpus.subject, "elsewhere", "human", "alice")
    other_subject = Binding(f"t-{uuid.uuid4().hex[:12]}", "default", "human", "alice")
    attempts = [
        (corpus.binding, "Which metal is gold?", {"limit": 5}),
        (corpus.binding, query, {"limit": 6}),
        (corpus.binding, query, {"limit": 5, "depth": 1}),
        (corpus.binding, query, {"limit": 5, "include_archived": True}),
        (other_actor, query, {"limit": 5}),
        (other_policy, query, {"limit": 5}),
        (other_subject, query, {"limit": 5}),
    ]
    for binding, q, options in attempts:
        with pytest.raises(CursorExpiredError):
            service.search(binding, SearchRequest(q, cursor=cursor, **options))


@pytest.mark.req("CUR-2")
def test_forged_cursor_is_expired_and_a_malformed_one_invalid(
    service: Service, corpus: Corpus
) -> None:
    query = "Which chemical element has which atomic number?"
    cursor = service.search(corpus.binding, SearchRequest(query, limit=5)).cursor
    assert cursor is not None
    prefix, body, mac = cursor.split(".")
    flipped = body[:10] + ("A" if body[10] != "A" else "B") + body[11:]
    # A cursor that parses but whose MAC does not verify is expired (CUR-2: it may
    # be one of an earlier secret); one that does not parse at all is invalid.
    forged = [
        f"{prefix}.{flipped}.{mac}",
        f"{prefix}.{body}.{mac[:-4]}",
        "gcu1.e30.AAAA",
    ]
    for bad in forged:
        with pytest.raises(CursorExpiredError):
            service.search(corpus.binding, SearchRequest(query, limit=5, cursor=bad))
    malformed = [
        f"{prefix}.{body}",
        f"{prefix}.{body}.{mac[:-2]}",  # not base64 any more
        "not-a-cursor",
        cursor.replace("gcu1", "gti1", 1),
    ]
    for bad in malformed:
        with pytest.raises(CursorInvalidError):
            service.search(corpus.binding, SearchRequest(query, limit=5, cursor=bad))


# ----------------------------------------------------------------------------- archive, subjects


@pytest.mark.req("ATM-6")
def test_archived_parents_are_hidden_by_default_and_half_states_are_not(
    service: Service, corpus: Corpus
) -> None:
    ids = corpus.ids
    stamp = "2025-01-01T00:00:00Z"
    _set_flags(service, corpus.subject, ids["parent"], {"atomisedInto": 2, "archivedAt": stamp})
    _set_flags(service, corpus.subject, ids["half_split"], {"atomisedInto": 2})
    _set_flags(service, corpus.subject, ids["half_stamp"], {"archivedAt": stamp})

    query = "flumberwick harvest snorkelplume reed"
    hidden = _full(service, corpus.binding, query)
    assert ids["parent"] not in _ids(hidden)
    assert {ids["summary"], ids["half_split"], ids["half_stamp"]} <= set(_ids(hidden))
    # The summary links to the parent: reached by propagation, it is still hidden.
    assert hidden.diagnostics["acquisition"]["hiddenArchived"] == 1

    shown = _full(service, corpus.binding, query, include_archived=True)
    assert ids["parent"] in _ids(shown)
    view = next(h.atom for h in shown.hits if h.atom.atom_id == ids["parent"])
    assert view.atomised_into == 2 and view.archived_at == stamp
    assert shown.diagnostics["acquisition"]["hiddenArchived"] == 0


@pytest.mark.req("LNK-1")
def test_a_retired_atom_leaves_search(service: Service, corpus: Corpus) -> None:
    atom_id = corpus.ids["retired"]
    assert (
        service.search(corpus.binding, SearchRequest("plonkwhistle valve")).hits[0].atom.atom_id
        == atom_id
    )
    service.write(
        corpus.binding,
        parse_changes([{"id": "r", "op": "retire", "target": {"atomId": atom_id, "rev": 1}}]),
    )
    result = _full(service, corpus.binding, "plonkwhistle valve")
    assert atom_id not in _ids(result)
    assert result.diagnostics["acquisition"]["lexicalCandidates"] == 0


@pytest.mark.req("API-2")
def test_a_query_in_one_subject_never_returns_another_subjects_atoms(
    service: Service, corpus: Corpus
) -> None:
    other = Binding(f"t-{uuid.uuid4().hex[:12]}", "default", "human", "bob")
    out = service.write(
        other,
        parse_changes(
            [
                _create("z", _SPECIAL["zorblax"]),
                _create("e", _SPECIAL["exercise"]),
                _create("q", _SPECIAL["quokka"], ["e"]),
            ]
        ),
    )
    theirs = {v.atom_id for v in out.changes.values()}
    ours = set(corpus.ids.values())
    for query in ("zorblax", PARAPHRASE, "quokka marsupial on Rottnest Island"):
        in_other = _full(service, other, query)
        assert set(_ids(in_other)) <= theirs
        in_corpus = _full(service, corpus.binding, query)
        assert set(_ids(in_corpus)) <= ours
    assert _full(service, other, "zorblax").hits[0].atom.atom_id == out.changes["z"].atom_id


# ----------------------------------------------------------------------------- GraphQL


@pytest.mark.req("API-6", "API-1", "CUR-2")
def test_search_over_http_returns_hits_diagnostics_and_cursor(  # type: ignore[no-untyped-def]
    corpus: Corpus, live_server
) -> None:
    token = live_server.token_for(corpus.binding)
    body = live_server.gql(SEARCH_GQL, {"q": "zorblax", "limit": 2}, token=token)
    assert "errors" not in body, body
    page = body["data"]["search"]
    top = page["hits"][0]
    assert top["atom"]["atomId"] == corpus.ids["zorblax"]
    assert top["atom"]["text"] == _SPECIAL["zorblax"]
    assert isinstance(top["score"], float) and top["score"] > 0
    assert top["scoreBreakdown"]["lexical"] == 1.0
    assert {"acquisition", "evaluation"} <= set(page["diagnostics"])
    assert page["diagnostics"]["evaluation"]["converged"] is True
    assert len(page["hits"]) == 2 and page["cursor"]

    body = live_server.gql(
        SEARCH_GQL, {"q": "zorblax", "limit": 2, "cursor": page["cursor"]}, token=token
    )
    assert "errors" not in body, body
    nxt = body["data"]["search"]["hits"]
    assert not {h["atom"]["atomId"] for h in nxt} & {h["atom"]["atomId"] for h in page["hits"]}

    body = live_server.gql(
        SEARCH_GQL, {"q": "zorblax", "limit": 2, "cursor": page["cursor"] + "x"}, token=token
    )
    assert body["data"] is None
    assert body["errors"][0]["extensions"]["code"] == "CURSOR_EXPIRED"


@pytest.mark.req("LNK-6")
def test_unfinished_purge_stops_first_and_later_search_pages(
    service: Service, human: Binding
) -> None:
    service.write(
        human,
        parse_changes([_create(f"p{i}", f"Purge guard note number {i}.") for i in range(4)]),
    )
    first = service.search(human, SearchRequest("purge guard note", limit=1))
    assert first.cursor is not None
    service.db.driver.execute_query(
        "CREATE (:PurgeMarker {subject: $s, atomId: 'x', step: 'plan'})",
        {"s": human.subject},
        database_=service.db.database,
    )
    try:
        with pytest.raises(PurgePendingError):
            service.search(human, SearchRequest("purge guard note", limit=1, cursor=first.cursor))
        with pytest.raises(PurgePendingError):
            service.search(human, SearchRequest("purge guard note", limit=1))
        # The state is read with the fulltext candidates, or alone when the text
        # makes no fulltext query: both stop.
        with pytest.raises(PurgePendingError):
            service.search(human, SearchRequest("?!", limit=1))
    finally:
        service.db.driver.execute_query(
            "MATCH (p:PurgeMarker {subject: $s}) DELETE p",
            {"s": human.subject},
            database_=service.db.database,
        )


_WEAK_GQL = """
query($q: String!) {
  search(query: $q, limit: 20) { hits { atom { atomId } weak breakdown { match } } }
}
"""


@pytest.mark.req("API-6", "ACT-4")
def test_hits_below_the_match_floor_are_marked_weak(  # type: ignore[no-untyped-def]
    corpus: Corpus, live_server
) -> None:
    from graphsvc.core.match_floor import WEAK_MATCH_FLOOR

    token = live_server.token_for(corpus.binding)
    topical = live_server.gql(_WEAK_GQL, {"q": "zorblax"}, token=token)
    hits = topical["data"]["search"]["hits"]
    assert hits[0]["atom"]["atomId"] == corpus.ids["zorblax"]
    assert hits[0]["weak"] is False
    gibberish = live_server.gql(_WEAK_GQL, {"q": "qzxvvq wplkjh"}, token=token)
    weak = gibberish["data"]["search"]["hits"]
    assert weak, "relative scores still rank hits for gibberish"
    assert all(h["weak"] for h in weak), weak
    for h in hits + weak:  # weak is exactly the floor on the match signal
        assert h["weak"] is (h["breakdown"]["match"] < WEAK_MATCH_FLOOR)
