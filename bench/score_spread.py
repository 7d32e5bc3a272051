"""Benchmark: how each embedding model's cosines spread over a question's candidates.

Run::

    .venv/bin/python bench/score_spread.py [--models all-MiniLM-L6-v2,bge-small-en-v1.5]
                                           [--data DIR] [--json PATH]

No database. The bodies are the LoCoMo development turns (``../shared/data/locomo``,
one text per turn, one pool per conversation) and the team corpus's current texts
(its creations with their revisions applied, retired atoms left out); each body is
embedded by the model's body path, each question by its query path (query precision
and prefix as a search embeds it). Per question, over the pool it is asked of:

- ``top1`` / ``top10``: the best and the tenth best cosine;
- ``median``: the median cosine over the question's candidates, here the best 64 by
  cosine together with every body BM25 scores above 0 among its best 64 (what the
  service's two legs hand the fusion with ``GRAPHSVC_MAX_SEEDS`` 64);
- ``spread``: ``top1 − median`` and the candidates' standard deviation;
- ``lexShare``: the share of the fused match's spread over the candidates that comes
  from the lexical term, ``sd(0.2·lex) / (sd(0.8·cos) + sd(0.2·lex))``, with ``lex``
  the BM25 score divided by the question's best (ACT-1's signals): the narrower the
  cosines, the more BM25 orders the fusion.

It also ranks each question's pool by exact cosine and by the 0.8/0.2 fusion
(``bench/quality.py``'s text-only rows) with the cosine as it is and with the cosine
mapped affinely to the first model's spread (``cal``: per model, the median over
questions of the candidates' median and standard deviation): the figure that says
whether the spread alone moves the fusion. Recall@5/@10 with paired 95 % intervals.

Writes ``bench/results/score_spread.json`` (or ``--json``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.quality import (  # noqa: E402
    Question,
    Scores,
    fuse,
    load_conversations,
    paired_margin,
    tokens_for,
)
from graphsvc.embed.sentence import embed_query, get_embedder  # noqa: E402
from graphsvc.seed import TEAM_CORPUS, read_corpus  # noqa: E402

CANDIDATES = 64
TEAM_QUESTIONS = ROOT / "bench" / "data" / "team_questions.json"


@dataclass
class Pool:
    """One pool of bodies and the questions asked of it."""

    name: str
    ids: list[str]
    texts: list[str]
    questions: list[Question]


def locomo_pools(data: str) -> list[Pool]:
    return [
        Pool(c.name, [t.dia_id for t in c.turns], [t.text for t in c.turns], c.questions)
        for c in load_conversations(data)
    ]


def team_pool() -> Pool:
    """The team corpus's current texts (creations, then revisions, less retirements)."""
    doc = read_corpus(TEAM_CORPUS)
    text = {c["id"]: c["content"]["text"] for batch in doc["batches"] for c in batch}
    for r in doc["revisions"]:
        text[r["local"]] = r["text"]
    for local in doc["retire"]:
        text.pop(local, None)
    qs = json.loads(TEAM_QUESTIONS.read_text(encoding="utf-8"))["questions"]
    questions = [Question(q["question"], q["evidence"], len(q["evidence"])) for q in qs]
    return Pool("team", list(text), list(text.values()), questions)


class Lexical:
    """BM25 (Lucene's, k1 1.2, b 0.75, English stemmer) over one pool."""

    def __init__(self, texts: list[str]):
        import bm25s
        import Stemmer

        self._bm25s = bm25s
        self.stemmer = Stemmer.Stemmer("english")
        self.bm25 = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, show_progress=False)
        self.bm25.index(tokens, show_progress=False)
        self.n = len(texts)

    def scores(self, text: str) -> np.ndarray:
        tokens = self._bm25s.tokenize(
            [text], stopwords="en", stemmer=self.stemmer, show_progress=False
        )
        if len(tokens.vocab) == 0:
            return np.zeros(self.n)
        return np.asarray(self.bm25.get_scores(list(tokens_for(tokens))), dtype=np.float64)


def candidates(cos: np.ndarray, bm: np.ndarray) -> np.ndarray:
    """The best ``CANDIDATES`` by cosine and the positive BM25 among its best ones."""
    sem = np.argsort(-cos, kind="stable")[:CANDIDATES]
    lex = [i for i in np.argsort(-bm, kind="stable")[:CANDIDATES] if bm[i] > 0]
    return np.array(sorted(set(sem.tolist()) | set(lex)))


def question_stats(cos: np.ndarray, bm: np.ndarray) -> dict[str, float]:
    cand = candidates(cos, bm)
    c = cos[cand]
    best = float(bm.max()) if bm.size else 0.0
    lex = bm[cand] / best if best > 0 else np.zeros(len(cand))
    top = np.sort(cos)[::-1]
    sd_cos, sd_lex = float(np.std(0.8 * c)), float(np.std(0.2 * lex))
    return {
        "top1": float(top[0]),
        "top10": float(top[min(9, len(top) - 1)]),
        "median": float(np.median(c)),
        "spread": float(top[0] - np.median(c)),
        "sd": float(np.std(c)),
        "lexShare": sd_lex / (sd_cos + sd_lex) if sd_cos + sd_lex > 0 else 0.0,
    }


def rank(ids: list[str], scores: np.ndarray) -> list[str]:
    return [ids[i] for i in np.argsort(-scores, kind="stable")[:10]]


def signals(model: str, pools: list[Pool]) -> dict[str, list[tuple[np.ndarray, np.ndarray]]]:
    """Per pool, each question's (cosine per body, BM25 per body)."""
    embedder = get_embedder(model)  # the service's query precision (int8) and prefix
    out: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    for pool in pools:
        bodies = np.asarray(embedder.embed(pool.texts), dtype=np.float64)
        bodies /= np.linalg.norm(bodies, axis=1, keepdims=True)
        lexical = Lexical(pool.texts)
        rows = []
        for q in pool.questions:
            v = np.asarray(embed_query(embedder, q.text), dtype=np.float64)
            rows.append((bodies @ (v / np.linalg.norm(v)), lexical.scores(q.text)))
        out[pool.name] = rows
        print(f"  {model}: {pool.name} ({len(pool.texts)} bodies) embedded", flush=True)
    return out


def summarise(stats: list[dict[str, float]]) -> dict[str, Any]:
    keys = stats[0].keys()
    return {
        k: {
            "median": round(float(np.median([s[k] for s in stats])), 4),
            "p10": round(float(np.percentile([s[k] for s in stats], 10)), 4),
            "p90": round(float(np.percentile([s[k] for s in stats], 90)), 4),
        }
        for k in keys
    }


def corpus_report(
    models: list[str],
    pools: list[Pool],
    sig: dict[str, dict[str, list[tuple[np.ndarray, np.ndarray]]]],
) -> dict[str, Any]:
    """One corpus: the spread per model and the text-only rankings with and without
    the affine map of each model's cosines onto the first model's spread."""
    stats = {m: [question_stats(c, b) for p in pools for c, b in sig[m][p.name]] for m in models}
    spread = {m: summarise(s) for m, s in stats.items()}
    ref = models[0]

    def affine(m: str) -> tuple[float, float]:
        """cos ↦ a·cos + b taking model m's median candidate (median, sd) onto ref's."""
        mr, sr = spread[ref]["median"]["median"], spread[ref]["sd"]["median"]
        mm, sm = spread[m]["median"]["median"], spread[m]["sd"]["median"]
        a = sr / sm
        return a, mr - a * mm

    systems: dict[str, Scores] = {}
    for m in models:
        a, b = affine(m)
        for name in ("cosine", "fusion", "fusion cal"):
            systems[f"{name} {m}"] = Scores()
        for p in pools:
            for q, (c, bm) in zip(p.questions, sig[m][p.name], strict=True):
                systems[f"cosine {m}"].add(rank(p.ids, c), q)
                systems[f"fusion {m}"].add(rank(p.ids, fuse(c, bm)), q)
                cal = np.clip(a * c + b, -1.0, 1.0)
                systems[f"fusion cal {m}"].add(rank(p.ids, fuse(cal, bm)), q)
    return {
        "spread": spread,
        "affine": {m: [round(x, 4) for x in affine(m)] for m in models},
        "systems": {n: s.summary() for n, s in systems.items()},
        "margins": {
            f"fusion cal {m} − fusion {m}": paired_margin(
                systems[f"fusion cal {m}"], systems[f"fusion {m}"]
            )
            for m in models[1:]
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--models", default="all-MiniLM-L6-v2,bge-small-en-v1.5")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "locomo"))
    ap.add_argument("--json", default=str(ROOT / "bench" / "results" / "score_spread.json"))
    args = ap.parse_args(argv)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    corpora = {"locomo": locomo_pools(args.data), "team": [team_pool()]}
    pools = [p for ps in corpora.values() for p in ps]
    sig = {m: signals(m, pools) for m in models}
    report = {name: corpus_report(models, ps, sig) for name, ps in corpora.items()}
    report["loadAverage"] = list(os.getloadavg())
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
    print_table(report, models)
    return 0


def print_table(report: dict[str, Any], models: list[str]) -> None:
    keys = ("top1", "top10", "median", "spread", "sd", "lexShare")
    for corpus in ("locomo", "team"):
        r = report[corpus]
        print(f"\n{corpus}: medians over questions (p10–p90)")
        print("model".ljust(22) + "".join(k.rjust(22) for k in keys))
        for m in models:
            s = r["spread"][m]
            cells = [
                f"{s[k]['median']:.3f} ({s[k]['p10']:.2f}–{s[k]['p90']:.2f})".rjust(22)
                for k in keys
            ]
            print(m.ljust(22) + "".join(cells))
        print("affine map onto the first model:", r["affine"])
        for name, s in r["systems"].items():
            mh = s["byCategory"].get("multi-hop", {}).get("recall@10", float("nan"))
            print(f"  {name:36s} R@5 {s['recall@5']:.3f}  R@10 {s['recall@10']:.3f}  mh {mh:.3f}")
        for name, mg in r["margins"].items():
            print(f"  {name}: R@5 {mg['recall@5']}  R@10 {mg['recall@10']}")


if __name__ == "__main__":
    raise SystemExit(main())
