"""What ``graphsvc import`` reports: progress after each batch and the run's summary.

Plain values, so the command line shows them without importing the import pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["MAX_BATCH", "ImportProgress", "ImportSummary"]

# Rows of one import batch (one transaction) at most: `--batch` is checked against it.
MAX_BATCH = 20_000


@dataclass(frozen=True)
class ImportProgress:
    """Reported after each batch (committed or replayed)."""

    rows_done: int
    rows: int
    batch: int
    batches: int
    elapsed_s: float


@dataclass
class ImportSummary:
    """The outcome of one ``import`` run."""

    file: str
    digest: str
    subject: str
    rows: int
    batch_size: int
    batches: int
    committed_batches: int = 0
    replayed_batches: int = 0
    committed_rows: int = 0
    replayed_rows: int = 0
    links: int = 0
    citations: int = 0
    seconds: float = 0.0
    embed_seconds: float = 0.0
    commit_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        rate = self.committed_rows / self.seconds if self.seconds > 0 else 0.0
        return {
            "file": self.file,
            "digest": self.digest,
            "subject": self.subject,
            "rows": self.rows,
            "batchSize": self.batch_size,
            "batches": self.batches,
            "committedBatches": self.committed_batches,
            "replayedBatches": self.replayed_batches,
            "committedRows": self.committed_rows,
            "replayedRows": self.replayed_rows,
            "links": self.links,
            "citations": self.citations,
            "seconds": round(self.seconds, 3),
            "embedSeconds": round(self.embed_seconds, 3),
            "commitSeconds": round(self.commit_seconds, 3),
            "atomsPerSecond": round(rate, 1),
            "indexing": "complete",
            "resumeKey": f"import:{self.digest}:{self.batch_size}",
            "notes": list(self.notes),
        }
