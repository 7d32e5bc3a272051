"""The tokenizer's cached part counts equal tiktoken's count of the whole text (RD-8).

``Tokenizer.count`` cuts long texts after '{"' before a letter or digit and sums
cached counts of the parts; that is exact only if cl100k_base's pre-tokenizer
always ends a piece there. These tests try hard to find a text where it does not.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphsvc.tokenizer import _CUT, Tokenizer, _parts, get_tokenizer

# Characters around the cut that matter to the pre-tokenizer: quotes and braces,
# apostrophes (contractions), letters/digits of several scripts, every kind of
# whitespace, and Unicode punctuation and symbols.
_ALPHABET = [
    *"{\"}[],:.-_()'s tlreTmd019 \n\r\t\u00a0\u2003\u3000é漢字٣١۳ß€—…«»",
    '{"',
    '{"a',
    '{"7',
    "'s",
    "'ll",
    '{"\n',
    '{" ',
]


def _whole(tok: Tokenizer, text: str) -> int:
    return len(tok.encode(text))


@pytest.mark.req("RD-8")
@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_ALPHABET), min_size=200, max_size=900))
def test_part_counts_add_up_for_adversarial_text(pieces: list[str]) -> None:
    tok = get_tokenizer()
    text = "".join(pieces)
    assert tok.count(text) == _whole(tok, text)


@pytest.mark.req("RD-8")
@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([*_ALPHABET, "{", '"', "{{", '""', '{"{"', "A"]), max_size=300))
def test_fast_cut_equals_the_regex_cut(pieces: list[str]) -> None:
    # The counted parts are exactly the regex definition's (including empty text,
    # '{"' at the very end, and '{"{"a' runs).
    text = "".join(pieces)
    assert _parts(text) == _CUT.split(text)


@pytest.mark.req("RD-8")
def test_part_counts_add_up_for_read_shaped_json() -> None:
    # Texts shaped like the read's formatVersion 2 JSON, with bodies drawn from a mix
    # of scripts, counted again and again as the packer does (warm cache).
    tok = get_tokenizer()
    rng = random.Random(5)
    words = ["harbour", "Lisbon", "1942", "it's", "naïve", "漢字", "—", '{"x"}', "'s", "\n"]
    for _ in range(200):
        memory = [
            {
                "links": [{"at": "logical", "required": rng.random() < 0.3, "role": "see-also"}],
                "ref": f"{rng.getrandbits(64):016x}@{rng.randrange(1, 9)}",
                "sources": [],
                "text": " ".join(rng.choice(words) for _ in range(rng.randrange(5, 60))),
            }
            for _ in range(rng.randrange(1, 12))
        ]
        text = json.dumps(
            {"evidence": [], "formatVersion": 2, "memory": memory},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        assert tok.count(text) == _whole(tok, text)
        assert tok.count(text) == _whole(tok, text)  # second time from the cache


def test_short_text_is_counted_whole() -> None:
    tok = get_tokenizer()
    assert tok.count("hello world") == 2
    assert tok.count("") == 0


@pytest.mark.req("RD-8", "RD-4")
def test_short_texts_are_cached_and_counted_the_same_again() -> None:
    # A read counts each presented body's entry; the same entries recur from read to
    # read, so short texts are cached whole, by their text (an exact key).
    tok = Tokenizer()
    rng = random.Random(11)
    entries = [
        json.dumps(
            {"ref": f"{rng.getrandbits(64):016x}@1", "text": f"harbour note {i} — naïve 漢字"},
            ensure_ascii=False,
        )
        for i in range(50)
    ]
    first = [tok.count(e) for e in entries]
    hits = tok._part.cache_info().hits
    again = [tok.count("".join(list(e))) for e in entries]  # equal texts, new objects
    assert again == first == [_whole(tok, e) for e in entries]
    assert tok._part.cache_info().hits == hits + len(entries)
