"""Benchmark: retrieval quality on LoCoMo (evidence recall@5/@10) against baselines.

Run::

    .venv/bin/python bench/quality.py [--data DIR] [--json OUT] [--limit-questions N]

Data: LoCoMo conversations (Maharana et al., "Evaluating Very Long-Term
Conversational Memory of LLM Agents", ACL 2024), as published by snap-research/locomo;
by default the development set in ``../shared/data/locomo``.

Each conversation is loaded into a subject of its own through the public GraphQL
``write`` mutation over HTTP: one atom per dialog turn with text
``[<session date_time>] <speaker>: <text>`` (plus `` [shares <blip_caption>]`` when
the turn has one), and a ``follows`` link (logical, not required) from each turn to
the previous turn of the same session; nothing else. For every question of
categories 1-4 with evidence ids that exist in the conversation, each system ranks
the conversation's turns and we count the share of the question's evidence turns
among its top 5 and top 10.

Systems, all in the same run, over the same texts:

- ``graphsvc``: ``search(query, limit: 10)`` over HTTP with the default depth and
  settings (latency p50/p95 measured here, on the client);
- ``graphsvc p=0``: the same service in process with propagation 0;
- ``cosine``: exact cosine of the query embedding to every turn's stored embedding
  (the service's embedder and vectors; the query embedded as the service embeds it:
  its query precision and the model's query prefix);
- ``bm25``: ``bm25s`` (Lucene's BM25 variant, k1 1.2, b 0.75) over the turn texts
  with standard English tokenisation (lower case, English stop words removed,
  Snowball English stemmer), per conversation;
- ``fusion``: 0.8 x cosine + 0.2 x BM25 / best BM25 of the question, no graph;
- ``peer k=128`` / ``peer k=512``: neo4j-graphrag's ``HybridCypherRetriever``
  (linear ranker, alpha 0.8) over graphsvc's own vector and fulltext indexes on the
  same Neo4j, the subject filter in its ``retrieval_query``, the first 10 rows kept;
  its query vectors come from the model that stored the vectors it searches.
- ``graphsvc (fp32 query)`` / ``cosine (fp32 query)`` / ``fusion (fp32 query)``: the
  same with the other query precision (int8 <-> fp32) over the same stored vectors;
- ``cosine (<other model>)`` / ``fusion (<other model>)``: the text-only rows with
  ``--other-model``'s embeddings of the same texts (default the shipped model; none
  when it is the service's own);
- ``--variants``: named in-process variants of graphsvc's settings (levers), e.g.
  ``p=0.3`` or ``roles=follows=1:0``, paired on the same questions.

Tenant independence: the first conversation is also loaded alone into a database
that holds nothing else (before the other conversations are loaded) and its
questions are searched in process; after the others are loaded the same searches
run again, and we report the share of questions whose top 10 changed and the
largest score change.

Writes ``bench/results/quality.json`` (or ``--json``) and prints one table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import BenchNeo4j  # noqa: E402
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.core.bm25 import escape_term  # noqa: E402
from graphsvc.core.requests import SearchRequest  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.embed.models import DEFAULT_MODEL, MODELS, model_spec  # noqa: E402
from graphsvc.embed.sentence import embed_query  # noqa: E402
from graphsvc.http.app import create_app  # noqa: E402  (path set up just above)
from graphsvc.keys.auth import AuthTable  # noqa: E402
from graphsvc.ops.index import (  # noqa: E402
    FULLTEXT_ANALYZER,
    fulltext_index_state,
    rebuild_fulltext_index,
)
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.service import Service  # noqa: E402
from graphsvc.settings import ENTITY_WEIGHTS_OFF  # noqa: E402
from graphsvc.store.connection import Database  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
WRITE = """
mutation($changes: [ChangeInput!]!) {
  write(changes: $changes) { changes { id atom { atomId } } }
}"""
SEARCH = """
query($q: String!) { search(query: $q, limit: 10) { hits { atom { atomId } score } } }"""


# ----------------------------------------------------------------------------- data


@dataclass
class Turn:
    dia_id: str
    session: int
    text: str


@dataclass
class Question:
    text: str
    evidence: list[str]
    category: int


@dataclass
class Conversation:
    name: str
    turns: list[Turn]
    questions: list[Question]
    atom_of: dict[str, str] = field(default_factory=dict)  # dia_id -> atomId
    dia_of: dict[str, str] = field(default_factory=dict)  # atomId -> dia_id
    subject: str = ""


def load_conversations(data: str | Path) -> list[Conversation]:
    """Every conversation (``*.json``) of the folder ``data``, by file name; none is an error."""
    files = sorted(Path(data).glob("*.json"))
    if not files:
        raise SystemExit(f"no conversations (*.json) in {data}")
    return [load_conversation(f) for f in files]


def load_conversation(path: Path) -> Conversation:
    raw = json.loads(path.read_text(encoding="utf-8"))
    turns: list[Turn] = []
    n = 1
    while f"session_{n}_date_time" in raw:
        when = raw[f"session_{n}_date_time"]
        for t in raw.get(f"session_{n}") or []:
            text = f"[{when}] {t['speaker']}: {t['text']}"
            if t.get("blip_caption"):
                text += f" [shares {t['blip_caption']}]"
            turns.append(Turn(t["dia_id"], n, text))
        n += 1
    ids = {t.dia_id for t in turns}
    questions = []
    for q in raw["qa"]:
        if q.get("category") not in CATEGORIES:
            continue
        evidence = [e for e in q.get("evidence") or [] if e in ids]
        if evidence:
            questions.append(Question(str(q["question"]), evidence, int(q["category"])))
    return Conversation(path.stem, turns, questions)


# ----------------------------------------------------------------------------- serving


@dataclass
class Live:
    url: str
    auth: AuthTable
    server: Any
    thread: threading.Thread

    client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=120))

    def gql(self, token: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        # One kept-alive connection, as an agent host's client holds (a new TCP
        # connection per request costs the client ~1 ms more and the server more).
        r = self.client.post(
            f"{self.url}/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        )
        body: dict[str, Any] = r.json()
        if body.get("errors"):
            raise RuntimeError(f"GraphQL error: {body['errors']}")
        return body


def serve(service: Service) -> Live:
    import uvicorn

    auth = AuthTable({})
    app = create_app(service, auth)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    return Live(f"http://127.0.0.1:{port}", auth, server, thread)


def write_conversation(live: Live, token: str, conv: Conversation) -> None:
    """One ``write`` per session: each turn a CREATE, ``follows`` the previous turn."""
    by_session: dict[int, list[Turn]] = {}
    for t in conv.turns:
        by_session.setdefault(t.session, []).append(t)
    for turns in by_session.values():
        for start in range(0, len(turns), 200):
            changes = []
            for i in range(start, min(start + 200, len(turns))):
                t = turns[i]
                links: list[dict[str, Any]] = []
                if i > 0:
                    prev = turns[i - 1]
                    target: dict[str, Any] = {"at": "LOGICAL", "required": False}
                    if i > start:
                        target["local"] = prev.dia_id
                    else:
                        target["ref"] = {"atomId": conv.atom_of[prev.dia_id], "rev": 1}
                    links.append({"role": "follows", "target": target})
                changes.append(
                    {
                        "id": t.dia_id,
                        "op": "CREATE",
                        "content": {"text": t.text, "links": links},
                        "sources": [],
                    }
                )
            body = live.gql(token, WRITE, {"changes": changes})
            for c in body["data"]["write"]["changes"]:
                conv.atom_of[c["id"]] = c["atom"]["atomId"]
                conv.dia_of[c["atom"]["atomId"]] = c["id"]


# ----------------------------------------------------------------------------- systems

Ranker = Callable[[Question], list[str]]  # top dia ids, best first


def load_conversation_into(live: Live, token: str, conv: Conversation, db: Database) -> None:
    """Write ``conv`` through ``live`` (GraphQL ``write``), wait for Neo4j's indexes,
    and say how long it took on stderr."""
    t0 = time.perf_counter()
    write_conversation(live, token, conv)
    db.driver.execute_query("CALL db.awaitIndexes(600)", database_=db.database)
    print(
        f"loaded {conv.name}: {len(conv.turns)} turns in {time.perf_counter() - t0:.1f}s",
        file=sys.stderr,
        flush=True,
    )


def recall(ranked: Sequence[str], evidence: Sequence[str], k: int) -> float:
    top = set(ranked[:k])
    return sum(1 for e in evidence if e in top) / len(evidence)


@dataclass
class Scores:
    r5: list[float] = field(default_factory=list)
    r10: list[float] = field(default_factory=list)
    cats: list[int] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)

    def add(self, ranked: Sequence[str], q: Question, ms: float | None = None) -> None:
        self.r5.append(recall(ranked, q.evidence, 5))
        self.r10.append(recall(ranked, q.evidence, 10))
        self.cats.append(q.category)
        if ms is not None:
            self.ms.append(ms)

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "questions": len(self.r5),
            "recall@5": round(float(np.mean(self.r5)), 4),
            "recall@10": round(float(np.mean(self.r10)), 4),
            "byCategory": {},
        }
        for c, name in CATEGORIES.items():
            idx = [i for i, x in enumerate(self.cats) if x == c]
            if idx:
                out["byCategory"][name] = {
                    "questions": len(idx),
                    "recall@5": round(float(np.mean([self.r5[i] for i in idx])), 4),
                    "recall@10": round(float(np.mean([self.r10[i] for i in idx])), 4),
                }
        if self.ms:
            out["p50Ms"] = round(percentile(self.ms, 50), 1)
            out["p95Ms"] = round(percentile(self.ms, 95), 1)
        return out


def paired_margin(a: Scores, b: Scores, boot: int = 4000) -> dict[str, list[float]]:
    """``a`` − ``b`` on the same questions: the mean difference of recall@5 and @10 and
    its 95 % interval by a paired bootstrap over questions (seeded: the same run gives
    the same interval)."""
    rng = np.random.default_rng(0)
    out: dict[str, list[float]] = {}
    for key, x, y in (("recall@5", a.r5, b.r5), ("recall@10", a.r10, b.r10)):
        d = np.asarray(x, dtype=np.float64) - np.asarray(y, dtype=np.float64)
        means = d[rng.integers(0, len(d), size=(boot, len(d)))].mean(axis=1)
        lo, hi = np.percentile(means, [2.5, 97.5])
        out[key] = [round(float(d.mean()), 4), round(float(lo), 4), round(float(hi), 4)]
    return out


def margins(systems: dict[str, Scores]) -> dict[str, dict[str, dict[str, list[float]]]]:
    """graphsvc's paired margin over each baseline and the peer (same questions)."""
    mine = systems["graphsvc"]
    others = [n for n in systems if n != "graphsvc" and not n.startswith("graphsvc")]
    return {
        "graphsvc": {
            n: paired_margin(mine, systems[n]) for n in others if len(systems[n].r5) == len(mine.r5)
        }
    }


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    rank = max(1, int(np.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


class Baselines:
    """cosine, BM25 and their fusion over one conversation's stored texts and vectors."""

    def __init__(
        self,
        db: Database,
        conv: Conversation,
        embed: Callable[[str], np.ndarray],
        bodies: Callable[[list[str]], list[list[float]]] | None = None,
    ):
        """``bodies``: embed the stored texts with another model (default: the
        stored embeddings)."""
        import bm25s
        import Stemmer

        rows, _, _ = db.driver.execute_query(
            "MATCH (r:Revision:Current {subject: $s}) RETURN r.atomId AS a, r.text AS t, "
            "r.embedding AS e",
            {"s": conv.subject},
            database_=db.database,
        )
        self.dia = [conv.dia_of[r["a"]] for r in rows]
        vectors = [r["e"] for r in rows] if bodies is None else bodies([r["t"] for r in rows])
        self.vectors = np.array(vectors, dtype=np.float64)
        self.vectors /= np.linalg.norm(self.vectors, axis=1, keepdims=True)
        self.stemmer = Stemmer.Stemmer("english")
        self.bm25 = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
        tokens = bm25s.tokenize(
            [r["t"] for r in rows], stopwords="en", stemmer=self.stemmer, show_progress=False
        )
        self.bm25.index(tokens, show_progress=False)
        self.embed = embed
        self._bm25s = bm25s

    def signals(self, q: Question) -> tuple[np.ndarray, np.ndarray]:
        cos = self.vectors @ self.embed(q.text)
        tokens = self._bm25s.tokenize(
            [q.text], stopwords="en", stemmer=self.stemmer, show_progress=False
        )
        if len(tokens.vocab) == 0:
            return cos, np.zeros(len(self.dia))
        bm = np.asarray(self.bm25.get_scores(list(tokens_for(tokens))), dtype=np.float64)
        return cos, bm

    def rank(self, scores: np.ndarray) -> list[str]:
        order = np.argsort(-scores, kind="stable")[:10]
        return [self.dia[i] for i in order]


def add_text_rows(
    systems: dict[str, Scores], base: Baselines, q: Question, suffix: str = "", bm25: bool = False
) -> None:
    """The text-only rows of one question: ``cosine``, ``fusion`` (and ``bm25``), each
    named with ``suffix``."""
    cos, bm = base.signals(q)
    systems["cosine" + suffix].add(base.rank(cos), q)
    if bm25:
        systems["bm25" + suffix].add(base.rank(bm), q)
    systems["fusion" + suffix].add(base.rank(fuse(cos, bm)), q)


def fuse(cos: np.ndarray, bm: np.ndarray) -> np.ndarray:
    """The text-only fusion: 0.8 x cosine + 0.2 x BM25 / the question's best BM25."""
    best = float(bm.max()) if bm.size else 0.0
    return 0.8 * cos + 0.2 * (bm / best if best > 0 else bm)


def tokens_for(tokens: Any) -> list[str]:
    inverse = {v: k for k, v in tokens.vocab.items()}
    return [inverse[i] for i in tokens.ids[0]]


def unit_embed(embedder: Any) -> Callable[[str], np.ndarray]:
    """A query's embedding by ``embedder``'s query path (its query precision, and the
    model's query prefix where it has one: what the service embeds a search with), as
    a unit float64 vector."""

    def embed(text: str) -> np.ndarray:
        v = np.asarray(embed_query(embedder, text), dtype=np.float64)
        return v / np.linalg.norm(v)

    return embed


class Peer:
    """neo4j-graphrag's HybridCypherRetriever (linear ranker, alpha 0.8)."""

    RETRIEVAL = (
        "WITH node, score WHERE node.subject = $subject "
        "RETURN node.atomId AS atomId, score ORDER BY score DESC"
    )

    def __init__(self, db: Database, embed: Callable[[str], np.ndarray]) -> None:
        from neo4j_graphrag.embeddings.base import Embedder
        from neo4j_graphrag.retrievers import HybridCypherRetriever

        outer = embed

        class _Embed(Embedder):  # type: ignore[misc]
            def embed_query(self, text: str) -> list[float]:
                return [float(x) for x in outer(text)]

        self.retriever = HybridCypherRetriever(
            db.driver,
            "current_embedding",
            "current_text",
            self.RETRIEVAL,
            embedder=_Embed(),
            neo4j_database=db.database,
        )
        self.embed = embed

    def search(self, subject: str, text: str, top_k: int) -> tuple[list[str], float]:
        """The first 10 atom ids for ``text`` in ``subject``, and the milliseconds the
        query embedding and the retrieval took."""
        from neo4j_graphrag.types import HybridSearchRanker

        # The peer passes its text to Lucene as a query: escape it as graphsvc does so
        # punctuation in questions cannot make a syntax error (same terms, OR-ed).
        lucene = " ".join(escape_term(t) for t in text.lower().split())
        t0 = time.perf_counter()
        vector = [float(x) for x in self.embed(text)]
        result = self.retriever.get_search_results(
            query_vector=vector,
            query_text=lucene,
            top_k=top_k,
            ranker=HybridSearchRanker.LINEAR,
            alpha=0.8,
            query_params={"subject": subject},
        )
        ms = (time.perf_counter() - t0) * 1000
        return [r["atomId"] for r in result.records][:10], ms

    def rank(self, conv: Conversation, q: Question, top_k: int) -> tuple[list[str], float]:
        ids, ms = self.search(conv.subject, q.text, top_k)
        return [conv.dia_of[a] for a in ids if a in conv.dia_of], ms


# ----------------------------------------------------------------------------- variants

ANALYZERS = ("english", "standard-no-stop-words", "standard", "simple", "whitespace")


def use_analyzer(db: Database, analyzer: str) -> None:
    """Give ``current_text`` this analyzer (graphsvc's own one through the rebuild
    command's code path; another one re-created here, as an older database has it)."""
    if analyzer not in ANALYZERS:
        raise SystemExit(f"unknown analyzer {analyzer!r}; one of {', '.join(ANALYZERS)}")
    state = fulltext_index_state(db)
    if state is not None and state["analyzer"] == analyzer:
        return
    if analyzer == FULLTEXT_ANALYZER:
        rebuild_fulltext_index(db, grace_s=0)
        return
    db.driver.execute_query("DROP INDEX current_text IF EXISTS", database_=db.database)
    db.driver.execute_query(
        "CREATE FULLTEXT INDEX current_text FOR (r:Current) ON EACH [r.text, r.subject] "
        "OPTIONS {indexConfig: {`fulltext.analyzer`: $analyzer}}",
        {"analyzer": analyzer},
        database_=db.database,
    )
    db.driver.execute_query("CALL db.awaitIndexes(600)", database_=db.database)
    db.write("index/clear_fulltext_rebuild")  # a new index generation (see ops/acquisition)


def parse_variant(spec: str) -> dict[str, Any]:
    """``p=0.3`` / ``roles=follows=1:0`` / ``seeds=32`` / ``oversample=4`` / ``prox=2`` /
    ``beta=0.3`` / ``depth=1`` / ``stats=index|subject`` / ``norm=max|bound`` /
    ``pool=128`` / ``scope=hits|candidates`` / ``vexact=2000`` /
    ``clause=first|fallback`` / ``ent=1`` / ``entdeg=32`` / ``entq=0.5`` /
    ``enta=3`` / ``entaw=1`` (the entity index's weight, degree bound, query-entity
    weight, anchors and anchor weight) / ``mirror=0`` (the head
    mirror's bound, 0: both legs asked of Neo4j) / ``cosmap=A:B`` (an experiment, not
    a setting: the semantic signal fused as ``A·cos + B``, see :class:`CosineMapped`),
    joined by ``;``."""
    changes: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        key, _, value = part.partition("=")
        if key == "p":
            changes["propagation"] = float(value)
        elif key == "roles":
            changes["role_weights"] = value
        elif key == "seeds":
            changes["max_seeds"] = int(value)
        elif key == "oversample":
            changes["candidate_oversample"] = int(value)
        elif key == "beta":
            changes["beta"] = float(value)
        elif key == "depth":
            changes["depth"] = int(value)
        elif key == "prox":
            changes["lexical_proximity"] = int(value)
        elif key == "stats":
            changes["lexical_statistics"] = value
        elif key == "norm":
            changes["lexical_normalisation"] = value
        elif key == "pool":
            changes["lexical_pool"] = int(value)
        elif key == "scope":
            changes["lexical_scope"] = value
        elif key == "vexact":
            changes["vector_exact_max"] = int(value)
        elif key == "clause":
            changes["fulltext_subject_clause"] = value
        elif key == "fan":
            changes["link_weighting"] = value
        elif key == "ent":
            changes["entity_weight"] = float(value)
        elif key == "entdeg":
            changes["entity_max_degree"] = int(value)
        elif key == "knn":
            changes["similar_heads"] = int(value)
        elif key == "knnw":
            changes["similar_weight"] = float(value)
        elif key == "entq":
            changes["entity_query_weight"] = float(value)
        elif key == "enta":
            changes["entity_anchors"] = int(value)
        elif key == "entaw":
            changes["entity_anchor_weight"] = float(value)
        elif key == "mirror":
            changes["head_mirror_max"] = int(value)
        elif key == "cosmap":
            a, _, b = value.partition(":")
            changes[COSINE_MAP] = (float(a), float(b or 0))
        else:
            raise SystemExit(f"unknown variant key {key!r} in {spec!r}")
    return changes


COSINE_MAP = "_cosine_map"


class CosineMapped:
    """A service whose searches fuse ``A·cos + B`` (clipped to [-1, 1]) instead of the
    cosine: the affine calibration of a model's cosines measured by
    ``bench/score_spread.py``. ACT-1 fuses the cosine itself, so this is a bench-only
    experiment (it patches the fusion for the duration of each search; the benches ask
    one search at a time), never a setting."""

    def __init__(self, service: Service, a: float, b: float):
        self.service, self.a, self.b = service, a, b

    def search(self, binding: Binding, request: SearchRequest) -> Any:
        import graphsvc.core.acquisition as acquisition

        shipped = acquisition.fuse_matches

        def mapped(scores: list[float | None], lexical: list[float | None]) -> Any:
            moved = [
                None
                if s is None
                else (min(1.0, max(-1.0, self.a * (2.0 * s - 1.0) + self.b)) + 1.0) / 2.0
                for s in scores
            ]
            return shipped(moved, lexical)

        acquisition.fuse_matches = mapped  # type: ignore[assignment]
        try:
            return self.service.search(binding, request)
        finally:
            acquisition.fuse_matches = shipped


def variant_service(
    settings: Any, changes: dict[str, Any], db: Database, embedder: Any, tokenizer: Any
) -> Any:
    """The service of one variant (a :class:`CosineMapped` one where it maps the cosine)."""
    rest = {k: v for k, v in changes.items() if k != COSINE_MAP}
    service = service_for(settings.with_(**rest), db, embedder, tokenizer)
    if COSINE_MAP in changes:
        return CosineMapped(service, *changes[COSINE_MAP])
    return service


def service_ranker(service: Service, conv: Conversation) -> Callable[[Question], list[str]]:
    binding = Binding(conv.subject, "default", "human", "bench")

    def rank(q: Question) -> list[str]:
        result = service.search(binding, SearchRequest(q.text, limit=10))
        return [conv.dia_of[h.atom.atom_id] for h in result.hits]

    return rank


def top10(service: Service, conv: Conversation, q: Question) -> list[tuple[str, float]]:
    binding = Binding(conv.subject, "default", "human", "bench")
    result = service.search(binding, SearchRequest(q.text, limit=10))
    return [(conv.dia_of[h.atom.atom_id], h.score) for h in result.hits]


def independence(
    alone: list[list[tuple[str, float]]], beside: list[list[tuple[str, float]]]
) -> dict[str, Any]:
    """How much of one subject's ranking the other subjects' data changed."""
    pairs = list(zip(alone, beside, strict=True))
    order_changed = sum(1 for a, b in pairs if [x for x, _ in a] != [x for x, _ in b])
    set_changed = sum(1 for a, b in pairs if {x for x, _ in a} != {x for x, _ in b})
    largest = 0.0
    for a, b in pairs:
        da, dbb = dict(a), dict(b)
        for key in set(da) | set(dbb):
            largest = max(largest, abs(da.get(key, 0.0) - dbb.get(key, 0.0)))
    return {
        "questions": len(alone),
        "top10Changed": order_changed,
        "top10ChangedShare": round(order_changed / max(1, len(alone)), 4),
        "top10SetChanged": set_changed,
        "top10SetChangedShare": round(set_changed / max(1, len(alone)), 4),
        "largestScoreChange": largest,
    }


# ----------------------------------------------------------------------------- profile


def profile(
    live: Live,
    service: Service,
    convs: Sequence[Conversation],
    tokens: dict[str, str],
    n: int,
    variants: dict[str, Service] | None = None,
) -> dict[str, Any]:
    """Where the HTTP search time goes: per phase p50/p95 over ``n`` questions (spans
    may overlap: the vector leg and the embedding run beside the fulltext query)."""
    import contextlib

    import graphsvc.core.acquisition as fusion_mod
    import graphsvc.ops.evaluate as evaluate_mod
    import graphsvc.store.connection as connection_mod

    spans: list[tuple[str, float]] = []
    lock = threading.Lock()

    def record(name: str, seconds: float) -> None:
        with lock:
            spans.append((name, seconds * 1000))

    original_timed = vars(connection_mod)["timed_query"]

    @contextlib.contextmanager
    def timed(name: str) -> Any:
        t0 = time.perf_counter()
        try:
            with original_timed(name):
                yield
        finally:
            record(f"cypher {name}", time.perf_counter() - t0)

    def wrap(owner: Any, attr: str, label: str) -> Callable[[], None]:
        original = getattr(owner, attr)

        def wrapped(*a: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return original(*a, **kw)
            finally:
                record(label, time.perf_counter() - t0)

        setattr(owner, attr, wrapped)
        return lambda: setattr(owner, attr, original)

    vars(connection_mod)["timed_query"] = timed
    undo = [
        wrap(service, "search", "service.search (server total)"),
        wrap(service.embedder, "embed", "query embedding"),
        wrap(evaluate_mod, "_propagate", "solve (build edges + propagate)"),
        wrap(fusion_mod, "lexical_signal", "lexical scoring (python)"),
        wrap(evaluate_mod, "_evaluate_in", "evaluation (in transaction)"),
    ]
    per: dict[str, list[float]] = {}
    try:
        questions = [(c, q) for c in convs for q in c.questions]
        step = max(1, len(questions) // max(1, n))
        for c, q in questions[::step][:n]:
            t0 = time.perf_counter()
            httpx.post(
                f"{live.url}/graphql",
                json={"query": SEARCH, "variables": {"q": q.text}},
                headers={"Authorization": f"Bearer {tokens[c.name]}"},
                timeout=120,
            )
            fresh = (time.perf_counter() - t0) * 1000
            spans.clear()
            t0 = time.perf_counter()
            live.gql(tokens[c.name], SEARCH, {"q": q.text})
            total = (time.perf_counter() - t0) * 1000
            sums: dict[str, float] = {
                "HTTP total (client, kept-alive connection)": total,
                "HTTP total, a new connection per request": fresh,
            }
            with lock:
                for name, ms in spans:
                    sums[name] = sums.get(name, 0.0) + ms
            server = sums.get("service.search (server total)", 0.0)
            sums["HTTP + GraphQL outside service.search"] = total - server
            binding = Binding(c.subject, "default", "human", "bench")
            for vname, vservice in {"shipped defaults": service, **(variants or {})}.items():
                t0 = time.perf_counter()
                vservice.search(binding, SearchRequest(q.text, limit=10))
                sums[f"in process: {vname}"] = (time.perf_counter() - t0) * 1000
            for name, ms in sums.items():
                per.setdefault(name, []).append(ms)
    finally:
        vars(connection_mod)["timed_query"] = original_timed
        for u in undo:
            u()
    out = {
        name: {
            "calls": len(v),
            "p50Ms": round(percentile(v, 50), 2),
            "p95Ms": round(percentile(v, 95), 2),
            "meanMs": round(float(np.mean(v)), 2),
        }
        for name, v in sorted(per.items(), key=lambda kv: -float(np.mean(kv[1])))
    }
    print(f"{'phase':<48} {'n':>4} {'p50 ms':>7} {'p95 ms':>7} {'mean':>7}")
    for name, row in out.items():
        print(
            f"{name:<48} {row['calls']:>4} {row['p50Ms']:>7} {row['p95Ms']:>7} {row['meanMs']:>7}"
        )
    return out


# ----------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "quality.json"))
    p.add_argument("--limit-questions", type=int, default=0, help="per conversation (0: all)")
    p.add_argument(
        "--variants",
        default="",
        help="in-process settings variants, separated by ',' (each 'k=v;k=v')",
    )
    p.add_argument(
        "--analyzers",
        default=FULLTEXT_ANALYZER,
        help="fulltext analyzers to evaluate graphsvc and the peer with, one after "
        f"another on the same data (e.g. {FULLTEXT_ANALYZER},standard-no-stop-words)",
    )
    p.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        help=f"the service's embedding model ({', '.join(MODELS)}); the cosine and "
        "fusion baselines are also computed with --other-model's embeddings of the "
        "same texts",
    )
    p.add_argument(
        "--other-model",
        default=DEFAULT_MODEL,
        help="the second model of the cosine and fusion baselines (default: the shipped one)",
    )
    p.add_argument("--no-peer", action="store_true")
    p.add_argument(
        "--entities-off-http",
        action="store_true",
        help="also serve the same database with the entity index's weights at 0 (ranking "
        "exactly §5) on a second server, asked in turn with graphsvc: the latency pair",
    )
    p.add_argument("--no-independence", action="store_true")
    p.add_argument(
        "--profile",
        type=int,
        default=0,
        help="after the run, time N searches over HTTP phase by phase",
    )
    args = p.parse_args(argv)

    convs = load_conversations(args.data)
    for c in convs:
        if args.limit_questions:
            c.questions = c.questions[: args.limit_questions]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    spec = model_spec(args.model)
    neo = BenchNeo4j("quality")
    settings = neo.settings.with_(embedding_model=spec.key)
    db = neo.database()
    run_id = uuid.uuid4().hex[:8]
    report: dict[str, Any] = {}
    try:
        db.apply_schema(embedding_dimension=spec.dimension)
        embedder = get_embedder(spec.key, settings.embedding.query_precision)
        # The other query precision over the same stored vectors (int8 <-> fp32).
        other_precision = "fp32" if settings.embedding.query_precision == "int8" else "int8"
        embedder_op = get_embedder(spec.key, other_precision)
        other = None if spec.key == args.other_model else get_embedder(args.other_model)
        embed_other = unit_embed(other) if other is not None else unit_embed(embedder)

        tokenizer = get_tokenizer()
        service = service_for(settings, db, embedder, tokenizer)
        live = serve(service)
        live_off = None
        if args.entities_off_http:
            live_off = serve(
                service_for(
                    settings.with_(**ENTITY_WEIGHTS_OFF),
                    db,
                    embedder,
                    tokenizer,
                )
            )

        embed = unit_embed(embedder)

        tokens: dict[str, str] = {}
        for c in convs:
            c.subject = f"locomo-{run_id}-{c.name}"
            tokens[c.name] = uuid.uuid4().hex
            live.auth.add(tokens[c.name], Binding(c.subject, "default", "human", "bench"))
            if live_off is not None:
                live_off.auth.add(tokens[c.name], Binding(c.subject, "default", "human", "bench"))

        def load(c: Conversation) -> None:
            load_conversation_into(live, tokens[c.name], c, db)

        use_analyzer(db, FULLTEXT_ANALYZER)
        variants = {v: parse_variant(v) for v in filter(None, args.variants.split(","))}
        analyzers = [a for a in args.analyzers.split(",") if a] or [FULLTEXT_ANALYZER]
        op_tag = f" ({other_precision} query)"
        names = ["cosine", "bm25", "fusion", "cosine" + op_tag, "fusion" + op_tag]
        if other is not None:
            names += [f"cosine ({args.other_model})", f"fusion ({args.other_model})"]
        systems: dict[str, Scores] = {n: Scores() for n in names}
        p0 = service_for(settings.with_(propagation=0.0), db, embedder, tokenizer)
        service_op = service_for(settings, db, embedder_op, tokenizer)
        embed_op = unit_embed(embedder_op)
        variant_services = {
            v: variant_service(settings, ch, db, embedder, tokenizer) for v, ch in variants.items()
        }
        # Tenant independence of the shipped defaults and of every variant.
        independent = {"graphsvc": service, **variant_services}
        first = convs[0]
        load(first)
        alone: dict[str, list[list[tuple[str, float]]]] = {}
        if not args.no_independence:
            alone = {
                n: [top10(s, first, q) for q in first.questions] for n, s in independent.items()
            }
        for c in convs[1:]:
            load(c)
        peer = None if args.no_peer else Peer(db, embed)
        indep: dict[str, Any] = {}
        asked = 0  # questions asked over HTTP, for the latency pair's order
        for phase, analyzer in enumerate(analyzers):
            use_analyzer(db, analyzer)
            tag = "" if analyzer == FULLTEXT_ANALYZER else f" [{analyzer}]"
            for name in (
                *(() if args.no_peer else ("peer k=128", "peer k=512")),
                "graphsvc p=0",
                "graphsvc" + op_tag,
                *variants,
                "graphsvc",
                *(("graphsvc, entities off (HTTP)",) if live_off is not None else ()),
            ):
                systems[name + tag] = Scores()
            # Warm up the HTTP path, Neo4j's plans and the peer on other texts.
            for c in convs:
                for w in ("hello there", "what happened last week", "a trip with friends"):
                    live.gql(tokens[c.name], SEARCH, {"q": w})
                    if live_off is not None:
                        live_off.gql(tokens[c.name], SEARCH, {"q": w})
                    if peer is not None:
                        peer.rank(c, Question(w, [], 4), 128)
            for c in convs:
                base_c = Baselines(db, c, embed) if phase == 0 else None
                base_op = Baselines(db, c, embed_op) if phase == 0 else None
                base_o = (
                    Baselines(db, c, embed_other, other.embed)
                    if phase == 0 and other is not None
                    else None
                )
                p0_rank = service_ranker(p0, c)
                op_rank = service_ranker(service_op, c)
                v_ranks = {v: service_ranker(s, c) for v, s in variant_services.items()}
                print(
                    f"evaluating {c.name} ({analyzer}): {len(c.questions)} questions",
                    file=sys.stderr,
                    flush=True,
                )
                for q in c.questions:
                    if base_c is not None:
                        add_text_rows(systems, base_c, q, bm25=True)
                    if base_op is not None:
                        add_text_rows(systems, base_op, q, op_tag)
                    if base_o is not None:
                        add_text_rows(systems, base_o, q, f" ({args.other_model})")
                    if peer is not None:
                        for k in (128, 512):
                            ranked, ms = peer.rank(c, q, k)
                            systems[f"peer k={k}{tag}"].add(ranked, q, ms)
                    systems["graphsvc p=0" + tag].add(p0_rank(q), q)
                    if phase == 0:
                        systems["graphsvc" + op_tag].add(op_rank(q), q)
                    for v, rank in v_ranks.items():
                        systems[v + tag].add(rank(q), q)
                    # The latency pair: the two servers asked in turn, which one first
                    # alternating by question (the first request after the in-process
                    # systems above pays for what they left behind).
                    servers = [("graphsvc", live)]
                    if live_off is not None:
                        servers.append(("graphsvc, entities off (HTTP)", live_off))
                    asked += 1
                    for name, server in servers[asked % 2 :] + servers[: asked % 2]:
                        t0 = time.perf_counter()
                        body = server.gql(tokens[c.name], SEARCH, {"q": q.text})
                        ms = (time.perf_counter() - t0) * 1000
                        hits = body["data"]["search"]["hits"]
                        ranked = [c.dia_of[h["atom"]["atomId"]] for h in hits]
                        systems[name + tag].add(ranked, q, ms)
            if alone and analyzer == FULLTEXT_ANALYZER:
                for n, svc in independent.items():
                    beside = [top10(svc, first, q) for q in first.questions]
                    indep[n] = {"conversation": first.name, **independence(alone[n], beside)}
        use_analyzer(db, FULLTEXT_ANALYZER)
        profiled = (
            profile(live, service, convs, tokens, args.profile, variant_services)
            if args.profile
            else {}
        )

        report = {
            "benchmark": "quality",
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": "bench/quality.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "data": str(args.data),
            "conversations": [
                {"name": c.name, "turns": len(c.turns), "questions": len(c.questions)}
                for c in convs
            ],
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            "loadAverage": [round(x, 2) for x in os.getloadavg()],
            "settings": {
                "propagation": settings.ranking.propagation,
                "beta": settings.ranking.beta,
                "roleWeights": settings.ranking.role_weights,
                "maxSeeds": settings.ranking.max_seeds,
                "candidateOversample": settings.ranking.candidate_oversample,
                "lexicalProximity": settings.ranking.lexical_proximity,
                "lexicalStatistics": settings.ranking.lexical_statistics,
                "lexicalNormalisation": settings.ranking.lexical_normalisation,
                "lexicalPool": settings.ranking.lexical_pool,
                "lexicalScope": settings.ranking.lexical_scope,
                "vectorExactMax": settings.ranking.vector_exact_max,
                "depth": settings.read.depth,
                "entities": settings.ranking.entities,
                "entityWeight": settings.ranking.entity_weight,
                "entityMaxDegree": settings.ranking.entity_max_degree,
                "entityQueryWeight": settings.ranking.entity_query_weight,
                "linkWeighting": settings.ranking.link_weighting,
                "embeddingModel": embedder.model_name,
            },
            "systems": {name: s.summary() for name, s in systems.items()},
            "pairedMargins": margins(systems),
            # Each system's recall per question (the same order for every system and
            # every run over the same data): paired intervals across runs and models.
            "perQuestion": {n: {"r5": s.r5, "r10": s.r10} for n, s in systems.items()},
            "tenantIndependence": indep.get("graphsvc", {}),
            "tenantIndependenceVariants": {n: v for n, v in indep.items() if n != "graphsvc"},
            "profile": profiled,
        }
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=1) + "\n")
        print_table(report)
        print(f"wrote {out}")
        for server in (live, live_off):
            if server is not None:
                server.server.should_exit = True
                server.thread.join(timeout=10)
    finally:
        db.close()
        neo.close()
    return 0


def print_table(report: dict[str, Any]) -> None:
    systems = report["systems"]
    cats = list(CATEGORIES.values())
    head = f"{'system':<28} {'R@5':>6} {'R@10':>6} " + " ".join(f"{c[:10]:>10}" for c in cats)
    print(head + f" {'p50 ms':>7} {'p95 ms':>7}")
    for name, s in systems.items():
        by = s["byCategory"]
        cells = " ".join(f"{by[c]['recall@10']:>10.3f}" if c in by else f"{'-':>10}" for c in cats)
        lat = f" {s.get('p50Ms', ''):>7} {s.get('p95Ms', ''):>7}"
        print(f"{name:<28} {s['recall@5']:>6.3f} {s['recall@10']:>6.3f} {cells}{lat}")
    every = {"graphsvc": report.get("tenantIndependence") or {}}
    every.update(report.get("tenantIndependenceVariants") or {})
    for name, ind in every.items():
        if not ind:
            continue
        print(
            f"tenant independence of {name} ({ind['conversation']}): top 10 order changed "
            f"for {ind['top10Changed']}/{ind['questions']} questions, its set for "
            f"{ind['top10SetChanged']}, "
            f"largest score change {ind['largestScoreChange']:.2e}"
        )
    print("(by-category columns: recall@10)")
    for base, m in (report.get("pairedMargins") or {}).get("graphsvc", {}).items():
        print(
            f"graphsvc − {base}: R@5 {m['recall@5'][0]:+.3f} "
            f"[{m['recall@5'][1]:+.3f}, {m['recall@5'][2]:+.3f}], "
            f"R@10 {m['recall@10'][0]:+.3f} "
            f"[{m['recall@10'][1]:+.3f}, {m['recall@10'][2]:+.3f}] (95 % paired bootstrap)"
        )


if __name__ == "__main__":
    raise SystemExit(main())
