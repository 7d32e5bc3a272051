"""Curators split one long body into atomic propositions (ATM-3, ATM-7).

- :class:`RuleCurator` — deterministic sentence/clause splitter, no model; for
  hermetic runs and the demo, used only when configured explicitly.
- :class:`LlmCurator` — the production curator over Ollama's HTTP API
  (``POST {base_url}/api/generate``) with a pinned system prompt.

A curator only proposes atoms; :func:`graphsvc.atomise.token_budget.apply_budget`
decides which survive (ATM-5).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any, Final, Protocol, runtime_checkable

import httpx

from graphsvc.atomise.token_budget import (
    MAX_ATOMS,
    count_tokens,
    validate_max_atom_tokens,
)
from graphsvc.errors import CuratorFailedError, InvalidInputError

__all__ = [
    "BACKOFF_SCHEDULE_S",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MODEL",
    "SYSTEM_PROMPT",
    "Curator",
    "LlmCurator",
    "RuleCurator",
    "backoff_delay",
    "build_prompt",
    "build_system_prompt",
    "parse_atoms",
]

DEFAULT_MODEL: Final = "gemma3:4b"
DEFAULT_MAX_RETRIES: Final = 3
# ATM-7: 100 ms → 500 ms → 2500 ms, then stays at 2500 ms.
BACKOFF_SCHEDULE_S: Final = (0.1, 0.5, 2.5)

# Pinned: changing this text changes every model's output, so a test pins its hash.
# ``{max_atom_tokens}`` is the only placeholder; braces of the JSON shape are doubled.
SYSTEM_PROMPT: Final = (
    "You split one memory into atomic propositions.\n"
    "Rules:\n"
    "- Return between 2 and 10 atoms: 2 ≤ N ≤ 10.\n"
    "- Each atom is one self-contained statement of at most {max_atom_tokens} tokens "
    "(≤ {max_atom_tokens} tokens, cl100k_base).\n"
    "- Keep the memory's language, names, numbers and facts. Add nothing. Resolve "
    "pronouns so that every atom can be read on its own.\n"
    "- Answer with JSON only, in exactly this shape and with no other keys:\n"
    '{{"atoms": [{{"text": "..."}}, {{"text": "..."}}]}}\n'
)


@runtime_checkable
class Curator(Protocol):
    """Anything that proposes atoms for a body."""

    def curate(self, text: str, max_atom_tokens: int) -> list[str]:
        """Split ``text`` into proposed atoms of at most ``max_atom_tokens`` tokens.

        Raises:
            InvalidInputError: ``text`` is empty or the budget is outside [50, 1000].
            CuratorFailedError: the curator could not produce atoms.
        """
        ...


# =========================================================================== rule


# Sentence ends: ., ! or ? followed by space and a non-lowercase start (so "e.g. x"
# stays whole), or a CJK full stop / exclamation / question mark (no space needed).
_SENTENCE_SPLIT = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"'”’)\]]))\s+(?=[^\sa-z])|(?<=[。！？])\s*")
_BLOCK_SPLIT = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)")
_ABBREVIATIONS: Final = frozenset(
    {"dr.", "mr.", "mrs.", "ms.", "prof.", "st.", "vs.", "fig.", "e.g.", "i.e."}
)
# Clause boundaries tried in order, coarsest first. Each split keeps the punctuation
# on the left piece so joining the pieces with a space restores the text.
_CLAUSE_SPLITS: Final = (
    re.compile(r"(?<=[;:；：])\s*"),
    re.compile(
        r"(?<=,)\s+(?=(?:and|but|or|so|yet|because|while|whereas|although|though|"
        r"which|however|then)\b)"
    ),
    re.compile(r"(?<=[,，、])\s*"),
)
# Fragments this small ("Yes.", "Step 2:") are not propositions; they join a neighbour.
_FRAGMENT_TOKENS: Final = 4


class RuleCurator:
    """Deterministic splitter: sentences, then clauses, then words; no model.

    The same ``(text, max_atom_tokens)`` always gives the same atoms.
    """

    def curate(self, text: str, max_atom_tokens: int) -> list[str]:
        """Split ``text`` into sentence/clause atoms within the budget where possible.

        Long sentences are split on ``;``/``:``, then on a comma before a
        conjunction, then on any comma, and as a last resort between words; tiny
        fragments join a neighbour; when there are more than 10 pieces the smallest
        adjacent pairs are merged while the merge stays within budget.

        Args:
            text: the body.
            max_atom_tokens: per-atom budget, in [50, 1000].

        Returns:
            The atoms in text order (one atom if the text has a single short
            sentence; possibly more than 10 if they cannot be merged within budget).

        Raises:
            InvalidInputError: ``text`` is empty or the budget is outside [50, 1000].
        """
        validate_max_atom_tokens(max_atom_tokens)
        if not isinstance(text, str) or not text.strip():
            raise InvalidInputError("cannot atomise an empty body")
        pieces: list[str] = []
        for sentence in _sentences(text):
            pieces.extend(_split_long(sentence, max_atom_tokens, 0))
        pieces = _merge_fragments(pieces, max_atom_tokens)
        return _merge_to_max_count(pieces, max_atom_tokens)


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for block in _BLOCK_SPLIT.split(text):
        flat = " ".join(block.split())
        if not flat:
            continue
        pending = ""
        for part in _SENTENCE_SPLIT.split(flat):
            part = part.strip()
            if not part:
                continue
            pending = f"{pending} {part}" if pending else part
            last_word = pending.rsplit(" ", 1)[-1].lower()
            if last_word in _ABBREVIATIONS:
                continue  # "Dr. Smith" is one sentence
            out.append(pending)
            pending = ""
        if pending:
            out.append(pending)
    return out


def _split_long(text: str, budget: int, level: int) -> list[str]:
    if count_tokens(text) <= budget:
        return [text]
    if level >= len(_CLAUSE_SPLITS):
        return _split_words(text, budget)
    parts = [p.strip() for p in _CLAUSE_SPLITS[level].split(text) if p.strip()]
    if len(parts) < 2:
        return _split_long(text, budget, level + 1)
    pieces: list[str] = []
    for part in parts:
        pieces.extend(_split_long(part, budget, level + 1))
    return _pack(pieces, budget)


def _split_words(text: str, budget: int) -> list[str]:
    # Last resort; a single word longer than the budget stays whole (apply_budget
    # will judge it).
    pieces: list[str] = []
    current = ""
    for word in text.split(" "):
        candidate = f"{current} {word}" if current else word
        if current and count_tokens(candidate) > budget:
            pieces.append(current)
            current = word
        else:
            current = candidate
    if current:
        pieces.append(current)
    return pieces


def _pack(pieces: list[str], budget: int) -> list[str]:
    """Re-join adjacent clause pieces greedily while they fit, to avoid confetti."""
    packed: list[str] = []
    for piece in pieces:
        if packed and count_tokens(f"{packed[-1]} {piece}") <= budget:
            packed[-1] = f"{packed[-1]} {piece}"
        else:
            packed.append(piece)
    return packed


def _merge_fragments(pieces: list[str], budget: int) -> list[str]:
    out: list[str] = []
    for piece in pieces:
        if out and count_tokens(piece) < _FRAGMENT_TOKENS:
            joined = f"{out[-1]} {piece}"
            if count_tokens(joined) <= budget:
                out[-1] = joined
                continue
        if out and count_tokens(out[-1]) < _FRAGMENT_TOKENS:
            joined = f"{out[-1]} {piece}"
            if count_tokens(joined) <= budget:
                out[-1] = joined
                continue
        out.append(piece)
    return out


def _merge_to_max_count(pieces: list[str], budget: int) -> list[str]:
    pieces = list(pieces)
    while len(pieces) > MAX_ATOMS:
        best: tuple[int, int] | None = None  # (joined tokens, index)
        for i in range(len(pieces) - 1):
            tokens = count_tokens(f"{pieces[i]} {pieces[i + 1]}")
            if tokens <= budget and (best is None or tokens < best[0]):
                best = (tokens, i)
        if best is None:
            break  # nothing merges within budget; apply_budget cuts to 10
        i = best[1]
        pieces[i : i + 2] = [f"{pieces[i]} {pieces[i + 1]}"]
    return pieces


# =========================================================================== parsing


def parse_atoms(text: str) -> list[str]:
    """Extract atoms from a model's answer, tolerantly.

    Accepted: ``{"atoms": [{"text": "…"}, …]}`` (items may also be plain strings),
    a bare JSON list of strings (or of ``{"text"}`` objects), optionally inside a
    Markdown code fence or surrounded by prose — then the first balanced JSON object
    or array that has one of these shapes is used.

    Args:
        text: the model's answer.

    Returns:
        The stripped, non-empty atom texts (at least one).

    Raises:
        CuratorFailedError: no acceptable JSON was found (``details.reason`` is
            ``"malformed"``).
    """
    if not isinstance(text, str):
        raise CuratorFailedError("curator answer is not text", details={"reason": "malformed"})
    candidates = [text.strip()]
    fence = re.search(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", text, re.DOTALL)
    if fence:
        candidates.insert(0, fence.group(1).strip())
    for candidate in candidates:
        atoms = _atoms_from_json_text(candidate)
        if atoms is not None:
            return atoms
    for candidate in _balanced_json_spans(text):
        atoms = _atoms_from_json_text(candidate)
        if atoms is not None:
            return atoms
    raise CuratorFailedError("curator answer holds no atoms JSON", details={"reason": "malformed"})


def _atoms_from_json_text(candidate: str) -> list[str] | None:
    try:
        doc = json.loads(candidate)
    except ValueError:
        return None
    return _atoms_from_doc(doc)


def _atoms_from_doc(doc: Any) -> list[str] | None:
    items = doc.get("atoms") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        return None
    atoms: list[str] = []
    for item in items:
        value = item.get("text") if isinstance(item, dict) else item
        if not isinstance(value, str):
            return None
        if value.strip():
            atoms.append(value.strip())
    return atoms or None


# Models sometimes ramble; scanning every '{'/'[' of a huge answer would be quadratic.
_MAX_JSON_STARTS: Final = 64


def _balanced_json_spans(text: str) -> list[str]:
    """Return top-level balanced ``{…}``/``[…]`` spans in order (string-aware).

    A span found is not searched inside: ``{"facts": ["A."]}`` must not yield the
    inner list as if it were the answer.
    """
    spans: list[str] = []
    position = 0
    for _ in range(_MAX_JSON_STARTS):
        starts = [i for i in (text.find("{", position), text.find("[", position)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        end = _matching_close(text, start)
        if end is None:
            position = start + 1
            continue
        spans.append(text[start : end + 1])
        position = end + 1
    return spans


def _matching_close(text: str, start: int) -> int | None:
    stack: list[str] = []
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack or stack.pop() != ch:
                return None
            if not stack:
                return i
    return None


# =========================================================================== LLM


def build_system_prompt(max_atom_tokens: int) -> str:
    """Return :data:`SYSTEM_PROMPT` with the budget filled in.

    Args:
        max_atom_tokens: per-atom budget, in [50, 1000].

    Returns:
        The system prompt.

    Raises:
        InvalidInputError: the budget is outside [50, 1000].
    """
    return SYSTEM_PROMPT.format(max_atom_tokens=validate_max_atom_tokens(max_atom_tokens))


def build_prompt(text: str, max_atom_tokens: int) -> str:
    """Return the user prompt for one body (deterministic; re-sent verbatim on retry).

    Args:
        text: the body.
        max_atom_tokens: per-atom budget, in [50, 1000].

    Returns:
        The prompt.

    Raises:
        InvalidInputError: the budget is outside [50, 1000].
    """
    validate_max_atom_tokens(max_atom_tokens)
    return (
        f"Split this memory into 2 to 10 atoms of at most {max_atom_tokens} tokens each. "
        'Answer only with {"atoms": [{"text": "..."}]}.\n\n'
        f"Memory:\n{text}"
    )


def backoff_delay(retry: int) -> float:
    """Return the wait before retry number ``retry`` (1-based), in seconds.

    Args:
        retry: 1 for the first retry.

    Returns:
        0.1, 0.5, then 2.5 for every later retry.
    """
    return BACKOFF_SCHEDULE_S[min(max(retry, 1), len(BACKOFF_SCHEDULE_S)) - 1]


class LlmCurator:
    """Curator over Ollama's ``/api/generate`` (non-streaming, JSON format).

    Retries — on a malformed answer, an HTTP 5xx or 429, or a connection error or
    timeout — re-send the original request body byte for byte after waiting
    :func:`backoff_delay`. ``max_retries`` does not count the first attempt.
    Any other HTTP 4xx (e.g. an unknown model) fails at once: retrying cannot fix it.
    """

    def __init__(
        self,
        base_url: str,
        *,
        model: str = DEFAULT_MODEL,
        timeout: float = 60.0,
        max_retries: int = DEFAULT_MAX_RETRIES,
        sleep: Callable[[float], None] = time.sleep,
        client: httpx.Client | None = None,
    ) -> None:
        """Configure the curator (no network I/O here).

        Args:
            base_url: Ollama's base URL, e.g. ``http://127.0.0.1:11434``.
            model: Ollama model name.
            timeout: per-request timeout in seconds.
            max_retries: retries after the first attempt (3 retries = 4 attempts).
            sleep: called with each backoff delay; injected by tests.
            client: optional shared httpx client; by default one per ``curate`` call.

        Raises:
            InvalidInputError: an argument is out of range.
        """
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise InvalidInputError("curator base_url must be an http(s) URL")
        if not model:
            raise InvalidInputError("curator model must be named")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise InvalidInputError("max_retries must be an integer >= 0")
        if not timeout > 0:
            raise InvalidInputError("timeout must be positive")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self._sleep = sleep
        self._client = client

    @property
    def endpoint(self) -> str:
        """The generate URL."""
        return f"{self.base_url}/api/generate"

    def request_body(self, text: str, max_atom_tokens: int) -> bytes:
        """Return the exact request body sent (and re-sent) for one body.

        Args:
            text: the body.
            max_atom_tokens: per-atom budget, in [50, 1000].

        Returns:
            UTF-8 JSON bytes.

        Raises:
            InvalidInputError: the budget is outside [50, 1000].
        """
        payload = {
            "model": self.model,
            "prompt": build_prompt(text, max_atom_tokens),
            "system": build_system_prompt(max_atom_tokens),
            "stream": False,
            "format": "json",
        }
        return json.dumps(payload, ensure_ascii=False, sort_keys=True).encode("utf-8")

    def curate(self, text: str, max_atom_tokens: int) -> list[str]:
        """Ask the model for atoms, retrying per ATM-7.

        Args:
            text: the body.
            max_atom_tokens: per-atom budget, in [50, 1000].

        Returns:
            The parsed atoms (not yet budgeted; see ``apply_budget``).

        Raises:
            InvalidInputError: ``text`` is empty or the budget is outside [50, 1000].
            CuratorFailedError: every attempt failed, or a non-retryable HTTP error;
                ``details`` holds ``attempts``, ``model`` and ``lastError``.
        """
        if not isinstance(text, str) or not text.strip():
            raise InvalidInputError("cannot atomise an empty body")
        body = self.request_body(text, max_atom_tokens)
        if self._client is not None:
            return self._attempts(self._client, body)
        with httpx.Client(timeout=self.timeout) as client:
            return self._attempts(client, body)

    def _attempts(self, client: httpx.Client, body: bytes) -> list[str]:
        attempts = self.max_retries + 1
        last_error = ""
        for attempt in range(1, attempts + 1):
            if attempt > 1:
                self._sleep(backoff_delay(attempt - 1))
            try:
                response = client.post(
                    self.endpoint,
                    content=body,
                    headers={"Content-Type": "application/json"},
                    timeout=self.timeout,
                )
            except httpx.RequestError as exc:
                last_error = f"connection error: {type(exc).__name__}: {exc}"
                continue
            status = response.status_code
            if status >= 500 or status == 429:
                last_error = f"HTTP {status}"
                continue
            if status >= 400:
                raise CuratorFailedError(
                    f"curator request refused with HTTP {status}",
                    details=self._details(attempt, f"HTTP {status}", retryable=False),
                )
            try:
                answer = response.json()["response"]
                return parse_atoms(answer)
            except (ValueError, KeyError, TypeError, CuratorFailedError) as exc:
                last_error = f"malformed answer: {exc}"
                continue
        raise CuratorFailedError(
            f"curator failed after {attempts} attempts: {last_error}",
            details=self._details(attempts, last_error, retryable=True),
        )

    def _details(self, attempts: int, last_error: str, *, retryable: bool) -> dict[str, Any]:
        return {
            "attempts": attempts,
            "model": self.model,
            "lastError": last_error,
            "retryable": retryable,
        }
