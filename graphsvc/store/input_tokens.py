"""The Input records InputTokens stand for (SPEC §3, TOK-3): which still exist."""

from __future__ import annotations

from collections.abc import Sequence

from graphsvc.store.connection import Database

__all__ = ["purged_token_ids"]


def purged_token_ids(db: Database, subject: str, token_ids: Sequence[str]) -> list[str]:
    """The ids among ``token_ids`` whose Input record is gone (purged), in the given order."""
    rows = db.read("observe/find_inputs", subject=subject, tokenIds=list(token_ids))
    return [r["tokenId"] for r in rows if not r["found"]]
