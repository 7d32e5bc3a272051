"""Test-only entry point of the import-resume test: ``graphsvc`` that dies after a batch.

Usage: ``python tests/integration/import_crash_entry.py N <graphsvc arguments>``.
It installs an import batch hook that SIGKILLs this process right after its N-th
batch commits (the next batch already prepared, its ids issued), then runs the CLI
with the remaining arguments (``import FILE --subject S …``). The hook lives only
here: production code never installs one and reads no fault switch.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence

from graphsvc.bulk.bulk_import import install_batch_hook
from graphsvc.cli import main as cli_main


def main(argv: Sequence[str]) -> int:
    after, *cli_args = argv
    kill_after = int(after)

    def kill(committed: int) -> None:
        if committed >= kill_after:
            os.kill(os.getpid(), signal.SIGKILL)

    install_batch_hook(kill)
    return cli_main(cli_args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
