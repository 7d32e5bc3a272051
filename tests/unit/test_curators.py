"""Curators and the token budget (ATM-3, ATM-5, ATM-7).

LlmCurator is exercised against a real loopback HTTP server that answers like
Ollama's ``/api/generate``; nothing is mocked below the socket.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from graphsvc.atomise.curators import (
    DEFAULT_MODEL,
    SYSTEM_PROMPT,
    Curator,
    LlmCurator,
    RuleCurator,
    backoff_delay,
    build_system_prompt,
    parse_atoms,
)
from graphsvc.atomise.token_budget import (
    SOURCE_TOO_SMALL,
    apply_budget,
    count_tokens,
    source_within_budget,
    tolerated_tokens,
    validate_max_atom_tokens,
)
from graphsvc.errors import CuratorFailedError, InvalidInputError

# A long multi-paragraph body: sentences, a bullet list, a long clause-heavy sentence,
# abbreviations and non-ASCII text.
LONG_DOC = "\n\n".join(
    [
        "Atomisation substrate primitive (v0.7.0 WT-1).",
        "The curator pass decomposes a long memory into 2-10 atomic propositions, writes "
        "each atom as a first-class memory carrying an atom_of back-pointer plus a signed "
        "derives_from edge, and archives the parent so recall surfaces the atoms in its "
        "place. The decomposition is auditable end-to-end; the parent to atoms chain ships "
        "inside the forensic bundle alongside the signed events, so an offline reviewer "
        "reconstructs the lineage without database access.",
        "Long-form memories (post-mortems, transcripts, structured notes) recall poorly "
        "against pointed agent queries because full-text search and the embedding both "
        "blur over content that spans many propositions. Splitting the long body lets "
        "recall match the specific claim the agent asked about, while the parent stays "
        "in a read-only archived state, and the substrate, not the application, owns the "
        "discipline.",
        "Operator interfaces:\n- Namespace policy, opt-in, off by default.\n- A tool that "
        "decomposes a memory by id in the foreground.\n- A CLI with stable exit codes.",
        "Malformed JSON responses retry up to the per-mode retry budget with exponential "
        "backoff (100 ms, 500 ms, 2500 ms); the final failed attempt collapses to "
        "CuratorFailed, which is deliberate, because silent retries hide a real prompt "
        "drift and burn token budget without operator consent, and an operator who needs "
        "more resilience can raise the budget per namespace. Dr. Rivera reviewed this "
        "design, e.g. the retry split, in May.",
        "日本語の段落もある。原子は一つの命題を持つ。",
    ]
)
LONG_TEXT = (
    "The ingest worker crashed at 02:14 UTC after the disk filled. "
    "Alerts fired eleven minutes later because the threshold was set to 98 percent. "
    "The on-call engineer freed space by rotating logs; the worker restarted cleanly. "
    "Root cause: log rotation had been disabled during the March migration. "
    "Action items are to re-enable rotation, lower the alert threshold to 90 percent, "
    "and add a disk-usage panel to the dashboard."
)


def words(n: int) -> str:
    """Text of exactly ``n`` cl100k tokens (checked in test_words_helper_is_exact)."""
    return "x" + " x" * (n - 1)


# =========================================================================== fake Ollama


@dataclass
class FakeOllama:
    """A loopback server answering POST /api/generate from a script of replies.

    Each reply is ``(status, body)``; the last one repeats. ``delay`` seconds are
    slept before the first reply only (to provoke a client timeout).
    """

    replies: list[tuple[int, bytes]]
    delay: float = 0.0
    bodies: list[bytes] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    base_url: str = ""

    def reply(self) -> tuple[int, bytes, float]:
        index = len(self.bodies) - 1
        status, body = self.replies[min(index, len(self.replies) - 1)]
        return status, body, (self.delay if index == 0 else 0.0)


def ollama_answer(model_text: str) -> tuple[int, bytes]:
    doc = {
        "model": DEFAULT_MODEL,
        "created_at": "2025-01-02T03:04:05Z",
        "response": model_text,
        "done": True,
    }
    return 200, json.dumps(doc).encode()


VALID = ollama_answer('{"atoms": [{"text": "Fact one."}, {"text": "Fact two."}]}')
MALFORMED = ollama_answer("I think the atoms are: fact one, fact two")


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    fake = FakeOllama(replies=[VALID])
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            with lock:
                fake.bodies.append(body)
                fake.paths.append(self.path)
                status, answer, delay = fake.reply()
            if delay:
                time.sleep(delay)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class RecordingSleep:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def curator_for(
    fake: FakeOllama, max_retries: int = 3, **kw: object
) -> tuple[LlmCurator, RecordingSleep]:
    sleep = RecordingSleep()
    return LlmCurator(fake.base_url, max_retries=max_retries, sleep=sleep, **kw), sleep  # type: ignore[arg-type]


# =========================================================================== LlmCurator


@pytest.mark.req("ATM-3")
def test_valid_answer_gives_atoms_in_one_request(ollama: FakeOllama) -> None:
    curator, sleep = curator_for(ollama)
    assert curator.curate(LONG_TEXT, 200) == ["Fact one.", "Fact two."]
    assert ollama.paths == ["/api/generate"]
    assert sleep.calls == []
    request = json.loads(ollama.bodies[0])
    assert request == {
        "model": DEFAULT_MODEL,
        "prompt": request["prompt"],
        "system": build_system_prompt(200),
        "stream": False,
        "format": "json",
    }
    assert LONG_TEXT in request["prompt"]
    assert "2 ≤ N ≤ 10" in request["system"]
    assert "≤ 200 tokens" in request["system"]
    assert '{"atoms": [{"text": "..."}' in request["system"]


@pytest.mark.req("ATM-3")
def test_model_is_configurable(ollama: FakeOllama) -> None:
    curator, _ = curator_for(ollama, model="gemma3:12b")
    curator.curate(LONG_TEXT, 200)
    assert json.loads(ollama.bodies[0])["model"] == "gemma3:12b"


@pytest.mark.req("ATM-3")
def test_fenced_json_answer_is_accepted(ollama: FakeOllama) -> None:
    ollama.replies = [
        ollama_answer('Here you go:\n```json\n{"atoms": [{"text": "A."}, {"text": "B."}]}\n```')
    ]
    curator, sleep = curator_for(ollama)
    assert curator.curate(LONG_TEXT, 200) == ["A.", "B."]
    assert sleep.calls == []


@pytest.mark.req("ATM-3")
def test_bare_list_answer_is_accepted(ollama: FakeOllama) -> None:
    ollama.replies = [ollama_answer('["First claim.", "Second claim.", "Third claim."]')]
    curator, _ = curator_for(ollama)
    assert curator.curate(LONG_TEXT, 200) == ["First claim.", "Second claim.", "Third claim."]


@pytest.mark.req("ATM-3", "ATM-7")
def test_malformed_then_valid_retries_with_the_identical_request(ollama: FakeOllama) -> None:
    ollama.replies = [MALFORMED, VALID]
    curator, sleep = curator_for(ollama)
    assert curator.curate(LONG_TEXT, 200) == ["Fact one.", "Fact two."]
    assert len(ollama.bodies) == 2
    assert ollama.bodies[0] == ollama.bodies[1]  # the original prompt, byte for byte
    assert sleep.calls == [0.1]


@pytest.mark.req("ATM-7")
def test_always_malformed_fails_after_max_retries_plus_one_attempts(ollama: FakeOllama) -> None:
    ollama.replies = [MALFORMED]
    curator, sleep = curator_for(ollama, max_retries=3)
    with pytest.raises(CuratorFailedError) as info:
        curator.curate(LONG_TEXT, 200)
    assert len(ollama.bodies) == 4
    assert len(set(ollama.bodies)) == 1
    assert sleep.calls == [0.1, 0.5, 2.5]
    assert info.value.code == "CURATOR_FAILED"
    assert info.value.details["attempts"] == 4
    assert info.value.details["model"] == DEFAULT_MODEL
    assert "malformed" in info.value.details["lastError"]


@pytest.mark.req("ATM-7")
@pytest.mark.parametrize(
    ("max_retries", "sleeps"),
    [(0, []), (1, [0.1]), (2, [0.1, 0.5]), (5, [0.1, 0.5, 2.5, 2.5, 2.5])],
)
def test_retry_budget_and_backoff_schedule(
    ollama: FakeOllama, max_retries: int, sleeps: list[float]
) -> None:
    ollama.replies = [MALFORMED]
    curator, sleep = curator_for(ollama, max_retries=max_retries)
    with pytest.raises(CuratorFailedError) as info:
        curator.curate(LONG_TEXT, 200)
    assert len(ollama.bodies) == max_retries + 1
    assert info.value.details["attempts"] == max_retries + 1
    assert sleep.calls == sleeps


@pytest.mark.req("ATM-7")
def test_http_500_then_valid_succeeds(ollama: FakeOllama) -> None:
    ollama.replies = [(500, b'{"error": "model crashed"}'), VALID]
    curator, sleep = curator_for(ollama)
    assert curator.curate(LONG_TEXT, 200) == ["Fact one.", "Fact two."]
    assert sleep.calls == [0.1]
    assert ollama.bodies[0] == ollama.bodies[1]


@pytest.mark.req("ATM-7")
def test_answer_that_is_not_ollama_json_is_retried(ollama: FakeOllama) -> None:
    ollama.replies = [(200, b"<html>proxy error</html>"), (200, b'{"done": true}'), VALID]
    curator, sleep = curator_for(ollama)
    assert curator.curate(LONG_TEXT, 200) == ["Fact one.", "Fact two."]
    assert sleep.calls == [0.1, 0.5]


@pytest.mark.req("ATM-7")
def test_client_error_is_not_retried(ollama: FakeOllama) -> None:
    ollama.replies = [(404, b'{"error": "model \\"gemma3:4b\\" not found"}')]
    curator, sleep = curator_for(ollama)
    with pytest.raises(CuratorFailedError) as info:
        curator.curate(LONG_TEXT, 200)
    assert len(ollama.bodies) == 1
    assert sleep.calls == []
    assert info.value.details["attempts"] == 1
    assert info.value.details["lastError"] == "HTTP 404"


@pytest.mark.req("ATM-7")
def test_timeout_is_retried(ollama: FakeOllama) -> None:
    ollama.delay = 1.0
    curator, sleep = curator_for(ollama, timeout=0.2)
    assert curator.curate(LONG_TEXT, 200) == ["Fact one.", "Fact two."]
    assert len(ollama.bodies) == 2
    assert sleep.calls == [0.1]


@pytest.mark.req("ATM-7")
def test_connection_refused_fails_after_all_retries() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # The port is closed again: every attempt is refused.
    sleep = RecordingSleep()
    curator = LlmCurator(f"http://127.0.0.1:{port}", max_retries=2, sleep=sleep)
    with pytest.raises(CuratorFailedError) as info:
        curator.curate(LONG_TEXT, 200)
    assert info.value.details["attempts"] == 3
    assert sleep.calls == [0.1, 0.5]
    assert "connection error" in info.value.details["lastError"]


@pytest.mark.req("ATM-5")
def test_over_budget_atoms_from_the_model_are_dropped(ollama: FakeOllama) -> None:
    atoms = [words(60), words(400), words(220), words(10)]
    ollama.replies = [ollama_answer(json.dumps({"atoms": [{"text": a} for a in atoms]}))]
    curator, _ = curator_for(ollama)
    outcome = apply_budget(curator.curate(LONG_TEXT, 200), 200)
    assert outcome.kept == [atoms[0], atoms[2], atoms[3]]
    assert outcome.dropped_count == 1
    assert len(outcome.warnings) == 1 and "220 tokens" in outcome.warnings[0]
    assert outcome.reason is None


@pytest.mark.req("ATM-3", "ATM-5")
def test_llm_curator_validates_its_inputs(ollama: FakeOllama) -> None:
    curator, _ = curator_for(ollama)
    with pytest.raises(InvalidInputError):
        curator.curate(LONG_TEXT, 49)
    with pytest.raises(InvalidInputError):
        curator.curate("   ", 200)
    with pytest.raises(InvalidInputError):
        LlmCurator("localhost:11434")
    with pytest.raises(InvalidInputError):
        LlmCurator(ollama.base_url, max_retries=-1)
    assert ollama.bodies == []


@pytest.mark.req("ATM-3")
def test_system_prompt_is_pinned() -> None:
    # Changing the prompt changes every model's output; this hash makes it deliberate.
    digest = hashlib.sha256(SYSTEM_PROMPT.encode("utf-8")).hexdigest()
    assert digest == PINNED_SYSTEM_PROMPT_SHA256
    assert "2 ≤ N ≤ 10" in SYSTEM_PROMPT
    assert "{max_atom_tokens}" in SYSTEM_PROMPT


PINNED_SYSTEM_PROMPT_SHA256 = "eaa07b7de962cbad31f7f0c9f66cb73ab8f6a9ded9385d66ad7b9340d39570db"


@pytest.mark.req("ATM-7")
def test_backoff_delay_schedule() -> None:
    assert [backoff_delay(n) for n in range(1, 7)] == [0.1, 0.5, 2.5, 2.5, 2.5, 2.5]


# =========================================================================== parse_atoms


@pytest.mark.req("ATM-3")
@pytest.mark.parametrize(
    ("answer", "atoms"),
    [
        ('{"atoms": [{"text": "A."}, {"text": "B."}]}', ["A.", "B."]),
        ('["A.", "B."]', ["A.", "B."]),
        ('[{"text": "A."}, {"text": "B."}]', ["A.", "B."]),
        ('{"atoms": ["A.", "B."]}', ["A.", "B."]),
        ('```json\n{"atoms": [{"text": "A."}, {"text": "B."}]}\n```', ["A.", "B."]),
        ('```\n["A.", "B."]\n```', ["A.", "B."]),
        ('Sure! Here: {"atoms": [{"text": "A."}, {"text": "B."}]} Hope it helps.', ["A.", "B."]),
        ('Notes {"n": 1} then {"atoms": [{"text": "x } y"}, {"text": "B."}]}', ["x } y", "B."]),
        ('{"atoms": [{"text": "  A.  "}, {"text": ""}, {"text": "B."}]}', ["A.", "B."]),
        (
            '{"atoms": [{"text": "日本語の原子。"}, {"text": "二つ目。"}]}',
            ["日本語の原子。", "二つ目。"],
        ),
    ],
)
def test_parse_atoms_accepts_tolerated_shapes(answer: str, atoms: list[str]) -> None:
    assert parse_atoms(answer) == atoms


@pytest.mark.req("ATM-3")
@pytest.mark.parametrize(
    "answer",
    [
        "",
        "no json here",
        '{"atoms": []}',
        '{"facts": ["A."]}',
        '{"atoms": [{"body": "A."}]}',
        '{"atoms": [1, 2]}',
        '{"atoms": [{"text": "A."}',
        "[1, 2, 3]",
    ],
)
def test_parse_atoms_rejects_malformed_answers(answer: str) -> None:
    with pytest.raises(CuratorFailedError) as info:
        parse_atoms(answer)
    assert info.value.details["reason"] == "malformed"


# =========================================================================== RuleCurator


@pytest.mark.req("ATM-3")
def test_rule_curator_is_a_curator_and_deterministic() -> None:
    assert isinstance(RuleCurator(), Curator)
    text = LONG_DOC
    first = RuleCurator().curate(text, 200)
    assert RuleCurator().curate(text, 200) == first
    assert RuleCurator().curate(text, 200) == first


@pytest.mark.req("ATM-3")
def test_rule_curator_splits_sentences() -> None:
    atoms = RuleCurator().curate(LONG_TEXT, 200)
    assert atoms == [
        "The ingest worker crashed at 02:14 UTC after the disk filled.",
        "Alerts fired eleven minutes later because the threshold was set to 98 percent.",
        "The on-call engineer freed space by rotating logs; the worker restarted cleanly.",
        "Root cause: log rotation had been disabled during the March migration.",
        "Action items are to re-enable rotation, lower the alert threshold to 90 percent, "
        "and add a disk-usage panel to the dashboard.",
    ]


@pytest.mark.req("ATM-3", "ATM-5")
@pytest.mark.parametrize("budget", [50, 120, 200, 500, 1000])
def test_rule_curator_keeps_atoms_within_budget_and_loses_no_text(budget: int) -> None:
    text = LONG_DOC
    atoms = RuleCurator().curate(text, budget)
    assert all(count_tokens(a) <= budget for a in atoms)
    assert "".join("".join(atoms).split()) == "".join(text.split())
    if count_tokens(text) <= 10 * budget * 0.5:
        assert 2 <= len(atoms) <= 10


@pytest.mark.req("ATM-3")
def test_rule_curator_splits_a_long_sentence_on_clause_boundaries() -> None:
    clause = "the service wrote the batch and checked every link against its target"
    sentence = "; ".join([clause] * 6) + "."
    atoms = RuleCurator().curate(sentence, 50)
    assert len(atoms) >= 2
    assert all(count_tokens(a) <= 50 for a in atoms)
    assert all(a.endswith((";", ".")) for a in atoms)


@pytest.mark.req("ATM-3")
def test_rule_curator_falls_back_to_word_splits() -> None:
    text = words(130)  # no punctuation at all
    atoms = RuleCurator().curate(text, 50)
    assert [count_tokens(a) for a in atoms] == [50, 50, 30]


@pytest.mark.req("ATM-3")
def test_rule_curator_merges_fragments_and_respects_abbreviations() -> None:
    text = "Yes. Dr. Smith approved the plan on Monday. It ships e.g. Neo4j 5. OK."
    atoms = RuleCurator().curate(text, 50)
    assert atoms == ["Yes. Dr. Smith approved the plan on Monday.", "It ships e.g. Neo4j 5. OK."]


@pytest.mark.req("ATM-3")
def test_rule_curator_splits_cjk_sentences() -> None:
    text = "猫は窓辺で眠っている。犬は庭を走り回っている！鳥は何を歌っているのだろう？"
    atoms = RuleCurator().curate(text, 50)
    assert atoms == [
        "猫は窓辺で眠っている。",
        "犬は庭を走り回っている！",
        "鳥は何を歌っているのだろう？",
    ]


@pytest.mark.req("ATM-3", "ATM-5")
def test_rule_curator_merges_down_to_ten_atoms_when_the_budget_allows() -> None:
    text = " ".join(f"Fact number {i} is recorded." for i in range(1, 31))
    atoms = RuleCurator().curate(text, 200)
    assert len(atoms) == 10
    assert all(count_tokens(a) <= 200 for a in atoms)


@pytest.mark.req("ATM-3", "ATM-5")
def test_rule_curator_rejects_bad_input() -> None:
    with pytest.raises(InvalidInputError):
        RuleCurator().curate("", 200)
    with pytest.raises(InvalidInputError):
        RuleCurator().curate(LONG_TEXT, 1001)


# =========================================================================== token budget


@pytest.mark.req("ATM-5")
def test_words_helper_is_exact() -> None:
    assert [count_tokens(words(n)) for n in (1, 50, 200, 250, 251)] == [1, 50, 200, 250, 251]


@pytest.mark.req("ATM-5")
@pytest.mark.parametrize("bad", [49, 1001, 0, -5, True, 200.0, "200"])
def test_max_atom_tokens_outside_50_to_1000_is_invalid(bad: object) -> None:
    with pytest.raises(InvalidInputError):
        validate_max_atom_tokens(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        apply_budget(["a", "b"], bad)  # type: ignore[arg-type]


@pytest.mark.req("ATM-5")
def test_budget_bounds_are_inclusive() -> None:
    assert validate_max_atom_tokens(50) == 50
    assert validate_max_atom_tokens(1000) == 1000
    assert tolerated_tokens(200) == 250
    assert tolerated_tokens(50) == 62


@pytest.mark.req("ATM-5")
def test_up_to_25_percent_over_is_kept_with_a_warning_beyond_is_dropped() -> None:
    outcome = apply_budget([words(200), words(201), words(250), words(251), words(10)], 200)
    assert [count_tokens(a) for a in outcome.kept] == [200, 201, 250, 10]
    assert len(outcome.warnings) == 2
    assert "atom 1 has 201 tokens" in outcome.warnings[0]
    assert "atom 2 has 250 tokens" in outcome.warnings[1]
    assert outcome.dropped_count == 1
    assert outcome.reason is None


@pytest.mark.req("ATM-5")
def test_more_than_ten_atoms_are_cut_to_ten_after_dropping() -> None:
    atoms = [words(400)] + [f"Atom {i}." for i in range(12)]
    outcome = apply_budget(atoms, 200)
    assert outcome.kept == [f"Atom {i}." for i in range(10)]
    assert outcome.dropped_count == 1
    assert outcome.truncated_count == 2


@pytest.mark.req("ATM-5")
@pytest.mark.parametrize(
    "atoms", [[], ["Only one."], [words(400), "Only one."], ["", "  ", "Only one."]]
)
def test_fewer_than_two_survivors_is_source_too_small(atoms: list[str]) -> None:
    outcome = apply_budget(atoms, 200)
    assert outcome.reason == SOURCE_TOO_SMALL == "source_too_small"
    assert len(outcome.kept) <= 1


@pytest.mark.req("ATM-5")
def test_source_within_one_atom_budget() -> None:
    assert source_within_budget(words(200), 200)
    assert not source_within_budget(words(201), 200)
    with pytest.raises(InvalidInputError):
        source_within_budget("text", 10)
