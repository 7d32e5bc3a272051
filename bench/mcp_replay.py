"""Benchmark: one LoCoMo conversation replayed through MCP against the same through GraphQL.

Run::

    flock -x /tmp/graphsvc-cpu.lock .venv/bin/python bench/mcp_replay.py
        [--data DIR] [--conversation 26] [--limit-questions N] [--json PATH]

One Neo4j (managed, or ``GRAPHSVC_NEO4J_URI``), one Service served by a real uvicorn;
the conversation (``bench/quality.py``'s texts: ``[<session date_time>] <speaker>:
<text>``) is loaded twice, each copy into a subject of its own, one turn per call,
interleaved turn by turn (which path goes first alternating):

- **GraphQL**: ``write`` over HTTP (kept-alive httpx), one CREATE per call with a
  ``follows`` link to the previous turn of its session (logical, not required, as
  ``bench/quality.py`` loads it; a human binding, as there);
- **MCP**: ``remember(text, about=[{atomId: <previous turn>, role: follows}])`` over
  ``/mcp`` of the same server with the SDK's streamable HTTP client, in one MCP
  session of an agent binding (the model's host: each call gets its InputToken). The
  link is pinned to the revision the session wrote (observed, not required); with no
  revision superseded, search walks it exactly as the logical one.

The whole load happens before any search, so the MCP session was shown nothing when it
remembered: its InputTokens declare no inputs and the two copies hold the same texts
and links. Then every question (categories 1-4 with evidence, as ``bench/quality.py``)
goes to ``search`` (limit 10) on both paths, interleaved; the GraphQL document selects
what the MCP tool answers (``bench/mcp_latency.py``'s). Recall is evidence recall
@5/@10 (``bench/quality.py``'s ``recall``), the paired difference MCP − GraphQL with a
95 % paired bootstrap, and per-call latency p50/p95 is timed at the client.

Writes ``bench/results/mcp_replay.json`` (or ``--json``) and prints one table.
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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import BenchNeo4j  # noqa: E402
from bench.mcp_latency import ATOM, SEARCH, Loop  # noqa: E402
from bench.quality import (  # noqa: E402
    DEFAULT_DATA,
    Conversation,
    Live,
    Scores,
    Turn,
    load_conversation,
    paired_margin,
    percentile,
    serve,
)
from graphsvc.core.binding import Binding  # noqa: E402

WRITE = (
    "mutation($changes: [ChangeInput!]!) { write(changes: $changes) { operationId indexing "
    "changes { id atom { " + ATOM + " } } } }"
)
T = TypeVar("T")
WARM = ["hello there", "what happened last week", "a trip with friends"]


class Paths:
    """The two clients of one conversation copy each: GraphQL (token, Live) and MCP."""

    def __init__(self, live: Live, gql_token: str, mcp: Loop) -> None:
        self.live, self.gql_token, self.mcp = live, gql_token, mcp

    def write(self, conv: Conversation, turn: Turn, prev: Turn | None) -> float:
        """One GraphQL ``write`` of ``turn``; the seconds it took."""
        links: list[dict[str, Any]] = []
        if prev is not None:
            ref = {"atomId": conv.atom_of[prev.dia_id], "rev": 1}
            target = {"at": "LOGICAL", "required": False, "ref": ref}
            links.append({"role": "follows", "target": target})
        change = {
            "id": turn.dia_id,
            "op": "CREATE",
            "content": {"text": turn.text, "links": links},
            "sources": [],
        }
        t0 = time.perf_counter()
        body = self.live.gql(self.gql_token, WRITE, {"changes": [change]})
        seconds = time.perf_counter() - t0
        atom = body["data"]["write"]["changes"][0]["atom"]["atomId"]
        conv.atom_of[turn.dia_id], conv.dia_of[atom] = atom, turn.dia_id
        return seconds

    def remember(self, conv: Conversation, turn: Turn, prev: Turn | None) -> float:
        """One MCP ``remember`` of ``turn``; the seconds it took."""
        arguments: dict[str, Any] = {"text": turn.text}
        if prev is not None:
            arguments["about"] = [{"atomId": conv.atom_of[prev.dia_id], "role": "follows"}]
        t0 = time.perf_counter()
        result = self.mcp.run(lambda c: c.call_tool("remember", arguments))
        seconds = time.perf_counter() - t0
        if result.is_error:
            raise RuntimeError(f"remember failed: {result.content}")
        atom = result.structured_content["atom"]["atomId"]
        conv.atom_of[turn.dia_id], conv.dia_of[atom] = atom, turn.dia_id
        return seconds

    def gql_search(self, conv: Conversation, text: str) -> tuple[list[str], float]:
        t0 = time.perf_counter()
        body = self.live.gql(self.gql_token, SEARCH, {"q": text})
        seconds = time.perf_counter() - t0
        return ranked(conv, body["data"]["search"]["hits"]), seconds

    def mcp_search(self, conv: Conversation, text: str) -> tuple[list[str], float]:
        arguments = {"query": text, "limit": 10}
        t0 = time.perf_counter()
        result = self.mcp.run(lambda c: c.call_tool("search", arguments))
        seconds = time.perf_counter() - t0
        if result.is_error:
            raise RuntimeError(f"search failed: {result.content}")
        return ranked(conv, result.structured_content["hits"]), seconds


def ranked(conv: Conversation, hits: Sequence[dict[str, Any]]) -> list[str]:
    """The dia ids of ``hits``, best first (atoms of no turn of ``conv`` left out)."""
    ids = (h["atom"]["atomId"] for h in hits)
    return [conv.dia_of[a] for a in ids if a in conv.dia_of]


def previous_turns(conv: Conversation) -> list[tuple[Turn, Turn | None]]:
    """Each turn with the previous turn of its session (None for a session's first)."""
    out: list[tuple[Turn, Turn | None]] = []
    prev: Turn | None = None
    for t in conv.turns:
        out.append((t, prev if prev is not None and prev.session == t.session else None))
        prev = t
    return out


def rotated(items: Sequence[T], i: int) -> list[T]:
    """``items`` starting with the one at ``i`` (so that none always goes first)."""
    k = i % len(items)
    return [*items[k:], *items[:k]]


def load_both(paths: Paths, gql: Conversation, mcp: Conversation) -> dict[str, list[float]]:
    """Every turn through both paths, one call each, interleaved; seconds per call."""
    times: dict[str, list[float]] = {"write": [], "remember": []}
    pairs = previous_turns(gql)
    t0 = time.perf_counter()
    calls = [("write", paths.write, gql), ("remember", paths.remember, mcp)]
    for i, (turn, prev) in enumerate(pairs):
        for name, call, conv in rotated(calls, i):
            times[name].append(call(conv, turn, prev))
        if (i + 1) % 50 == 0:
            print(
                f"loaded {i + 1}/{len(pairs)} turns per path ({time.perf_counter() - t0:.0f}s)",
                file=sys.stderr,
                flush=True,
            )
    return times


def ask_both(
    paths: Paths, gql: Conversation, mcp: Conversation
) -> tuple[Scores, Scores, list[float], list[float], list[dict[str, Any]]]:
    """Every question through both ``search`` paths, interleaved: recall, seconds per
    call, and the questions whose top 10 (dia ids, in order) differ between the two."""
    sg, sm = Scores(), Scores()
    tg: list[float] = []
    tm: list[float] = []
    differ: list[dict[str, Any]] = []
    calls = [("g", paths.gql_search, gql, tg), ("m", paths.mcp_search, mcp, tm)]
    for i, q in enumerate(gql.questions):
        got: dict[str, list[str]] = {}
        for name, call, conv, times in rotated(calls, i):
            got[name], seconds = call(conv, q.text)
            times.append(seconds)
        sg.add(got["g"], q)
        sm.add(got["m"], q)
        if got["g"] != got["m"]:
            differ.append({"question": q.text, "graphql": got["g"], "mcp": got["m"]})
    return sg, sm, tg, tm, differ


def latency(seconds: Sequence[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {
        "calls": len(ms),
        "p50Ms": round(percentile(ms, 50), 1),
        "p95Ms": round(percentile(ms, 95), 1),
        "meanMs": round(sum(ms) / len(ms), 1),
    }


def ratio(mcp: dict[str, float], gql: dict[str, float]) -> dict[str, float]:
    return {
        "p50": round(mcp["p50Ms"] / gql["p50Ms"], 2),
        "p95": round(mcp["p95Ms"] / gql["p95Ms"], 2),
        "mean": round(mcp["meanMs"] / gql["meanMs"], 2),
    }


def warm_up(live: Live, make_loop: Callable[[str], Loop]) -> None:
    """Model, plans and connections: a few writes and searches on both paths in a
    subject of their own (and an MCP session of its own), before anything timed."""
    subject = f"warm-{uuid.uuid4().hex[:8]}"
    gtok, mtok = uuid.uuid4().hex, uuid.uuid4().hex
    live.auth.add(gtok, Binding(subject, "default", "human", "bench"))
    live.auth.add(mtok, Binding(subject, "default", "agent", "bench"))
    loop = make_loop(mtok)
    try:
        paths = Paths(live, gtok, loop)
        conv = Conversation("warm", [Turn(f"w{i}", 1, t) for i, t in enumerate(WARM)], [])
        other = Conversation("warm-mcp", conv.turns, [])
        for turn, prev in previous_turns(conv):
            paths.write(conv, turn, prev)
            paths.remember(other, turn, prev)
        for text in WARM:
            paths.gql_search(conv, text)
            paths.mcp_search(other, text)
    finally:
        loop.close()


def mcp_loop(url: str) -> Callable[[str], Loop]:
    """A connected SDK client (streamable HTTP, default profile) for a token."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    def make(token: str) -> Loop:
        headers = {"Authorization": f"Bearer {token}"}
        return Loop(
            lambda: Client(
                streamable_http_client(
                    f"{url}/mcp",
                    http_client=httpx2.AsyncClient(headers=headers, timeout=600),
                ),
                read_timeout_seconds=600,
            )
        )

    return make


def report_of(
    args: argparse.Namespace,
    conv: Conversation,
    loads: dict[str, list[float]],
    asked: tuple[Scores, Scores, list[float], list[float], list[dict[str, Any]]],
) -> dict[str, Any]:
    sg, sm, tg, tm, differ = asked
    gql = {**sg.summary(), "write": latency(loads["write"]), "search": latency(tg)}
    mcp = {**sm.summary(), "remember": latency(loads["remember"]), "search": latency(tm)}
    return {
        "benchmark": "mcp_replay",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "bench/mcp_replay.py " + " ".join(sys.argv[1:]),
        "conversation": {
            "name": conv.name,
            "turns": len(conv.turns),
            "questions": len(conv.questions),
        },
        "machine": {"cpus": os.cpu_count()},
        "loadAverage": [round(x, 2) for x in os.getloadavg()],
        "graphql": gql,
        "mcp": mcp,
        "pairedDifference": paired_margin(sm, sg),  # MCP − GraphQL: [mean, lo, hi]
        "sameTop10": len(conv.questions) - len(differ),
        # Of those that differ: the same ten turns in another order.
        "sameTop10Set": len(conv.questions)
        - sum(set(d["graphql"]) != set(d["mcp"]) for d in differ),
        "differ": differ,
        "ratios": {
            "remember/write": ratio(mcp["remember"], gql["write"]),
            "search": ratio(mcp["search"], gql["search"]),
        },
    }


def print_table(r: dict[str, Any]) -> None:
    c = r["conversation"]
    print(f"conversation {c['name']}: {c['turns']} turns, {c['questions']} questions")
    print(
        f"{'path':<8} {'R@5':>6} {'R@10':>6}  {'load call p50/p95 ms':>22}  {'search p50/p95':>16}"
    )
    for name, load in (("graphql", "write"), ("mcp", "remember")):
        p = r[name]
        lc, sc = p[load], p["search"]
        print(
            f"{name:<8} {p['recall@5']:>6.3f} {p['recall@10']:>6.3f}  "
            f"{load:>8} {lc['p50Ms']:>6.1f} / {lc['p95Ms']:>6.1f}  "
            f"{sc['p50Ms']:>6.1f} / {sc['p95Ms']:>6.1f}"
        )
    d = r["pairedDifference"]
    print(
        f"MCP − GraphQL: R@5 {d['recall@5'][0]:+.4f} [{d['recall@5'][1]:+.4f}, "
        f"{d['recall@5'][2]:+.4f}], R@10 {d['recall@10'][0]:+.4f} [{d['recall@10'][1]:+.4f}, "
        f"{d['recall@10'][2]:+.4f}] (95 % paired bootstrap); same top 10 for "
        f"{r['sameTop10']}/{c['questions']} questions (the same set for {r['sameTop10Set']})"
    )
    for op, x in r["ratios"].items():
        print(f"MCP/GraphQL {op}: ×{x['p50']} p50, ×{x['p95']} p95, ×{x['mean']} mean")
    print(f"load average {r['loadAverage']}")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(DEFAULT_DATA), help="folder of LoCoMo *.json")
    p.add_argument("--conversation", default="26", help="file name in --data, without .json")
    p.add_argument("--limit-questions", type=int, default=0, help="0: every question")
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "mcp_replay.json"))
    args = p.parse_args(argv)

    path = Path(args.data) / f"{args.conversation.removesuffix('.json')}.json"
    if not path.is_file():
        raise SystemExit(f"no conversation {path}")
    gql_conv, mcp_conv = load_conversation(path), load_conversation(path)
    if args.limit_questions:
        gql_conv.questions = gql_conv.questions[: args.limit_questions]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    from graphsvc.embed import get_embedder
    from graphsvc.runtime import service_for
    from graphsvc.tokenizer import get_tokenizer

    neo = BenchNeo4j("mcp-replay")
    db = neo.database()
    try:
        db.apply_schema()
        live = serve(service_for(neo.settings, db, get_embedder(), get_tokenizer()))
        make_loop = mcp_loop(live.url)
        warm_up(live, make_loop)
        run = uuid.uuid4().hex[:8]
        gql_conv.subject = f"replay-{run}-graphql"
        mcp_conv.subject = f"replay-{run}-mcp"
        gtok, mtok = uuid.uuid4().hex, uuid.uuid4().hex
        live.auth.add(gtok, Binding(gql_conv.subject, "default", "human", "bench"))
        live.auth.add(mtok, Binding(mcp_conv.subject, "default", "agent", "bench"))
        loop = make_loop(mtok)
        try:
            paths = Paths(live, gtok, loop)
            loads = load_both(paths, gql_conv, mcp_conv)
            db.driver.execute_query("CALL db.awaitIndexes(600)", database_=db.database)
            print(f"asking {len(gql_conv.questions)} questions", file=sys.stderr, flush=True)
            asked = ask_both(paths, gql_conv, mcp_conv)
        finally:
            loop.close()
        report = report_of(args, gql_conv, loads, asked)
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=1) + "\n")
        print_table(report)
        print(f"wrote {out}")
        live.server.should_exit = True
        live.thread.join(timeout=10)
    finally:
        db.close()
        neo.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
