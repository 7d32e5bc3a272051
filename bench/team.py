"""Benchmark: graph-sensitive retrieval on the demo team corpus (questions over 2–3 links).

Run::

    .venv/bin/python bench/team.py [--json OUT] [--variants 'ent=0;entq=0,p=0.5']

The corpus (``seed/team.json``: services, owners, SLOs, incidents with
their trigger, cause, detection, mitigation and follow-ups, decisions, runbooks) is
loaded with :func:`graphsvc.seed.load_team_corpus` into a subject of its own, as
``graphsvc seed`` does. The questions are ``bench/data/team_questions.json``: each
needs two or three linked atoms (gold evidence: the corpus's change ids), and is
phrased so that only one of them matches its words well. Each system ranks the
subject's atoms; we count the share of a question's evidence among its top 5 and
top 10, overall and for the 2-atom and 3-atom questions.

Systems, in the same run over the same stored texts and embeddings:

- ``graphsvc``: ``search(query, limit: 10)`` over HTTP with the shipped settings
  (entity index on), latency measured at the client;
- ``graphsvc, entities off (HTTP)``: the same over a second server with the entity
  index's weights at 0 (ranking exactly §5: today's graphsvc), for the latency pair;
- in-process variants (``--variants``, keys as in ``bench/quality.py`` plus ``ent``,
  ``entdeg``, ``entq``);
- ``cosine``, ``bm25``, ``fusion`` (0.8/0.2): text only (``bench/quality.py``'s), the
  query embedded as the service does (precision, the model's query prefix);
- ``graphsvc (fp32 query)``, ``cosine (fp32 query)``, ``fusion (fp32 query)``: the other
  query precision over the same stored vectors; ``cosine (<other model>)`` and
  ``fusion (<other model>)``: ``--other-model``'s embeddings of the same texts;
- ``peer k=128``: neo4j-graphrag's ``HybridCypherRetriever`` (linear, alpha 0.8).

Paired 95 % intervals (bootstrap over questions) of graphsvc against every other row.
Writes ``bench/results/team.json`` and prints one table.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import BenchNeo4j  # noqa: E402
from bench.quality import (  # noqa: E402
    SEARCH,
    Baselines,
    Conversation,
    Peer,
    Question,
    add_text_rows,
    paired_margin,
    parse_variant,
    percentile,
    recall,
    serve,
    unit_embed,
    variant_service,
)
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.core.requests import SearchRequest  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.embed.models import DEFAULT_MODEL, MODELS, model_spec  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.seed import load_team_corpus  # noqa: E402
from graphsvc.service import Service  # noqa: E402
from graphsvc.settings import ENTITY_WEIGHTS_OFF  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

QUESTIONS = ROOT / "bench" / "data" / "team_questions.json"
DEFAULT_VARIANTS = "ent=0;entq=0,p=0.5;ent=0;entq=0"


@dataclass
class Scores:
    """Recall of one system, per question (in question order)."""

    r5: list[float] = field(default_factory=list)
    r10: list[float] = field(default_factory=list)
    atoms: list[int] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)
    top: list[list[str]] = field(default_factory=list)

    def add(self, ranked: Sequence[str], q: Question, ms: float | None = None) -> None:
        self.top.append(list(ranked[:10]))
        self.r5.append(recall(ranked, q.evidence, 5))
        self.r10.append(recall(ranked, q.evidence, 10))
        self.atoms.append(len(q.evidence))
        if ms is not None:
            self.ms.append(ms)

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "questions": len(self.r5),
            "recall@5": round(float(np.mean(self.r5)), 4),
            "recall@10": round(float(np.mean(self.r10)), 4),
        }
        for n in (2, 3):
            idx = [i for i, a in enumerate(self.atoms) if a == n]
            if idx:
                out[f"recall@10 ({n} atoms)"] = round(float(np.mean([self.r10[i] for i in idx])), 4)
        if self.ms:
            out["p50Ms"] = round(percentile(self.ms, 50), 1)
            out["p95Ms"] = round(percentile(self.ms, 95), 1)
        return out


def ranker(
    service: Service, binding: Binding, conv: Conversation
) -> Callable[[Question], list[str]]:
    def rank(q: Question) -> list[str]:
        hits = service.search(binding, SearchRequest(q.text, limit=10)).hits
        return [conv.dia_of.get(h.atom.atom_id, h.atom.atom_id) for h in hits]

    return rank


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "team.json"))
    p.add_argument("--variants", default=DEFAULT_VARIANTS, help="';' within, ',' between")
    p.add_argument("--no-peer", action="store_true")
    p.add_argument("--repeat", type=int, default=3, help="HTTP passes over the questions")
    p.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        help=f"the embedding model of every system ({', '.join(MODELS)})",
    )
    p.add_argument(
        "--other-model",
        default=DEFAULT_MODEL,
        help="a second model for the cosine and fusion baselines (default: the shipped one)",
    )
    args = p.parse_args(argv)
    doc = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    spec = model_spec(args.model)
    neo = BenchNeo4j("team")
    db = neo.database()
    try:
        db.apply_schema(embedding_dimension=spec.dimension)
        settings = neo.settings.with_(embedding_model=spec.key)
        precision = settings.embedding.query_precision
        embedder, tokenizer = get_embedder(spec.key, precision), get_tokenizer()
        other_precision = "fp32" if precision == "int8" else "int8"
        embedder_op = get_embedder(spec.key, other_precision)
        service = service_for(settings, db, embedder, tokenizer)
        subject = f"team-{uuid.uuid4().hex[:8]}"
        t0 = time.perf_counter()
        loaded = load_team_corpus(service, subject=subject)
        load_s = time.perf_counter() - t0
        db.driver.execute_query("CALL db.awaitIndexes(600)", database_=db.database)
        rows, _, _ = db.driver.execute_query(
            "MATCH (r:Revision:Current {subject: $s}) RETURN r.atomId AS a", {"s": subject},
            database_=db.database,
        )  # fmt: skip
        local_of = {a: local for local, a in loaded["ids"].items()}
        conv = Conversation("team", [], [], subject=subject)
        conv.dia_of = {r["a"]: local_of.get(r["a"], r["a"]) for r in rows}
        questions = [
            Question(q["question"], q["evidence"], len(q["evidence"])) for q in doc["questions"]
        ]
        missing = [e for q in questions for e in q.evidence if e not in loaded["ids"]]
        if missing:
            raise SystemExit(f"evidence not in the corpus: {missing}")
        binding = Binding(subject, "default", "human", "bench")
        live = serve(service)
        token = uuid.uuid4().hex
        live.auth.add(token, binding)
        off = service_for(settings.with_(**ENTITY_WEIGHTS_OFF), db, embedder, tokenizer)
        live_off = serve(off)
        live_off.auth.add(token, binding)
        variants = {v: parse_variant(v) for v in filter(None, args.variants.split(","))}
        ranks = {
            f"graphsvc {v}": ranker(
                variant_service(settings, ch, db, embedder, tokenizer), binding, conv
            )
            for v, ch in variants.items()
        }

        op_tag = f" ({other_precision} query)"
        ranks["graphsvc" + op_tag] = ranker(
            service_for(settings, db, embedder_op, tokenizer), binding, conv
        )
        # The peer and the baselines embed a query as the service does (the query
        # path: its precision, the model's query prefix) against the stored vectors.
        embed = unit_embed(embedder)
        base = Baselines(db, conv, embed)
        base_op = Baselines(db, conv, unit_embed(embedder_op))
        other = None if spec.key == args.other_model else get_embedder(args.other_model)
        base_o = None if other is None else Baselines(db, conv, unit_embed(other), other.embed)
        peer = None if args.no_peer else Peer(db, embed)
        names = ["graphsvc", "graphsvc, entities off (HTTP)", *ranks, "cosine", "bm25", "fusion"]
        names += ["cosine" + op_tag, "fusion" + op_tag]
        if base_o is not None:
            names += [f"cosine ({args.other_model})", f"fusion ({args.other_model})"]
        systems: dict[str, Scores] = {n: Scores() for n in names}
        if peer is not None:
            systems["peer k=128"] = Scores()
        for w in ("who owns billing", "what broke in march", "a runbook for kafka"):
            live.gql(token, SEARCH, {"q": w})
            live_off.gql(token, SEARCH, {"q": w})
        for q in questions:
            for name, rank in ranks.items():
                systems[name].add(rank(q), q)
            add_text_rows(systems, base, q, bm25=True)
            add_text_rows(systems, base_op, q, op_tag)
            if base_o is not None:
                add_text_rows(systems, base_o, q, f" ({args.other_model})")
            if peer is not None:
                systems["peer k=128"].add(peer.rank(conv, q, 128)[0], q)
        # The latency pair: both servers asked in turn, question by question, so the
        # machine's load falls on both alike; recall from the first pass.
        pair = [("graphsvc", live), ("graphsvc, entities off (HTTP)", live_off)]
        for rep in range(args.repeat):
            for i, q in enumerate(questions):
                # Which server goes first alternates, so neither always follows the other.
                for name, server in pair[(i + rep) % 2 :] + pair[: (i + rep) % 2]:
                    t = time.perf_counter()
                    body = server.gql(token, SEARCH, {"q": q.text})
                    ms = (time.perf_counter() - t) * 1000
                    hits = [
                        conv.dia_of.get(h["atom"]["atomId"], "")
                        for h in body["data"]["search"]["hits"]
                    ]
                    if rep == 0:
                        systems[name].add(hits, q, ms)
                    else:
                        systems[name].ms.append(ms)
        mine = systems["graphsvc"]
        report = {
            "benchmark": "team",
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": "bench/team.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "questions": len(questions),
            "corpusAtoms": loaded["atoms"],
            "loadSeconds": round(load_s, 1),
            "loadAverage": [round(x, 2) for x in os.getloadavg()],
            "settings": {
                "embeddingModel": spec.key,
                "propagation": settings.ranking.propagation,
                "roleWeights": settings.ranking.role_weights,
                "entities": settings.ranking.entities,
                "entityWeight": settings.ranking.entity_weight,
                "entityMaxDegree": settings.ranking.entity_max_degree,
                "entityQueryWeight": settings.ranking.entity_query_weight,
            },
            "systems": {n: s.summary() for n, s in systems.items()},
            # Per question: which evidence atoms text alone (fusion) and graphsvc put in
            # their top 10; "textOnly" counts the questions where text alone finds more
            # than one (the benchmark means to need the graph for all but one).
            "perQuestion": [
                {
                    "id": d["id"],
                    "fusion": [e for e in q.evidence if e in systems["fusion"].top[i]],
                    "graphsvc": [e for e in q.evidence if e in mine.top[i]],
                }
                for i, (d, q) in enumerate(zip(doc["questions"], questions, strict=True))
            ],
            # Per question pattern, each evidence position (the atom the question's words
            # match, then the one or two reached over links): found in the top 10 of
            # graphsvc and of fusion, out of the questions of that pattern.
            "byPattern": by_pattern(doc["questions"], mine.top, systems["fusion"].top),
            "textOnly": sum(
                1
                for i, q in enumerate(questions)
                if sum(e in systems["fusion"].top[i] for e in q.evidence) > 1
            ),
            "perSystem": {n: {"r5": s.r5, "r10": s.r10} for n, s in systems.items()},
            "pairedMargins": {
                n: paired_margin(mine, s)  # type: ignore[arg-type]
                for n, s in systems.items()
                if n != "graphsvc"
            },
        }
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=1) + "\n")
        print_table(report)
        print_patterns(report["byPattern"])
        print(f"wrote {out}")
        for server in (live, live_off):
            server.server.should_exit = True
            server.thread.join(timeout=10)
    finally:
        db.close()
        neo.close()
    return 0


def by_pattern(
    asked: Sequence[dict[str, Any]],
    graphsvc: Sequence[Sequence[str]],
    fusion: Sequence[Sequence[str]],
) -> dict[str, list[dict[str, int]]]:
    """For each question pattern, per evidence position: how many of its questions have
    that atom in graphsvc's top 10 and in fusion's, and how many questions there are."""
    out: dict[str, list[dict[str, int]]] = {}
    for d, mine, text in zip(asked, graphsvc, fusion, strict=True):
        cells = out.setdefault(d["pattern"], [])
        for k, e in enumerate(d["evidence"]):
            if k == len(cells):
                cells.append({"questions": 0, "graphsvc": 0, "fusion": 0})
            cells[k]["questions"] += 1
            cells[k]["graphsvc"] += e in mine
            cells[k]["fusion"] += e in text
    return out


def print_patterns(patterns: dict[str, list[dict[str, int]]]) -> None:
    print("evidence in the top 10 by pattern and position (graphsvc / fusion of questions):")
    for pattern, cells in patterns.items():
        found = ", ".join(f"{c['graphsvc']} / {c['fusion']} of {c['questions']}" for c in cells)
        print(f"  {pattern:<32} {found}")


def print_table(report: dict[str, Any]) -> None:
    print(
        f"{'system':<34} {'R@5':>6} {'R@10':>6} {'2 atoms':>8} {'3 atoms':>8} {'p50':>6} {'p95':>6}"
    )
    for name, s in report["systems"].items():
        print(
            f"{name:<34} {s['recall@5']:>6.3f} {s['recall@10']:>6.3f} "
            f"{s.get('recall@10 (2 atoms)', 0):>8.3f} {s.get('recall@10 (3 atoms)', 0):>8.3f} "
            f"{s.get('p50Ms', ''):>6} {s.get('p95Ms', ''):>6}"
        )
    for name, m in report["pairedMargins"].items():
        print(
            f"graphsvc − {name}: R@5 {m['recall@5'][0]:+.3f} [{m['recall@5'][1]:+.3f}, "
            f"{m['recall@5'][2]:+.3f}], R@10 {m['recall@10'][0]:+.3f} "
            f"[{m['recall@10'][1]:+.3f}, {m['recall@10'][2]:+.3f}]"
        )


if __name__ == "__main__":
    raise SystemExit(main())
