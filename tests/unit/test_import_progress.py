"""The ``graphsvc import`` progress bar: count, rate, eta; throttled, last line always."""

from __future__ import annotations

import io

from graphsvc.cli.import_cmd import ProgressBar
from graphsvc.core.import_report import ImportProgress


def test_progress_bar_prints_count_rate_and_eta_and_always_the_last_line() -> None:
    out = io.StringIO()
    bar = ProgressBar(out, interval=3600)
    bar(ImportProgress(rows_done=2_000, rows=10_000, batch=1, batches=5, elapsed_s=0.5))
    bar(ImportProgress(rows_done=4_000, rows=10_000, batch=2, batches=5, elapsed_s=1.0))
    bar(ImportProgress(rows_done=10_000, rows=10_000, batch=5, batches=5, elapsed_s=2.0))
    lines = out.getvalue().splitlines()
    assert lines == [
        "import: [####                ] 2,000/10,000 atoms 4,000 atoms/s  batch 1/5  eta 2s",
        "import: [####################] 10,000/10,000 atoms 5,000 atoms/s  batch 5/5  eta 0s",
    ]
