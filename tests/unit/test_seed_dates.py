"""The team corpus dated along its texts (issue 49): the instants the seed writes at."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from graphsvc.seed import TEAM_CORPUS, creation_dates, read_corpus, text_instant


def test_a_text_is_dated_by_the_first_date_it_names() -> None:
    at = text_instant("INC-2041 timeline 2025-11-03 11:41 UTC: retries tripled")
    assert at == datetime(2025, 11, 3, 11, 41, tzinfo=UTC).timestamp()
    assert (
        text_instant("ADR-020 (2026-02-10): keys")
        == datetime(2026, 2, 10, 12, tzinfo=UTC).timestamp()
    )
    assert text_instant("payments-api books payments") is None
    assert text_instant("build 2026-13-45 failed") is None


@pytest.mark.req("API-4")
def test_the_team_corpus_spans_months_and_nothing_exists_before_what_it_links_to() -> None:
    doc = read_corpus(TEAM_CORPUS)
    when = creation_dates(doc)
    creates = {c["id"]: c for batch in doc["batches"] for c in batch}
    assert set(when) == set(creates)
    for cid, change in creates.items():
        for link in change["content"]["links"]:
            target = link["target"].get("local")
            if target in creates:
                assert when[cid] >= when[target], (cid, target)
    days = (max(when.values()) - min(when.values())) / 86400
    assert days > 180, days
    named = [cid for cid, c in creates.items() if text_instant(c["content"]["text"])]
    assert all(when[cid] >= text_instant(creates[cid]["content"]["text"]) for cid in named)
    assert len(set(when.values())) >= 20  # many instants, not a handful of batches
