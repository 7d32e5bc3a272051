"""Test-only entry point of the LNK-6 crash test: ``graphsvc`` that dies after a purge step.

Usage: ``python tests/integration/purge_crash_entry.py STEP <graphsvc arguments>``.
It installs a purge step hook that SIGKILLs this process right after STEP commits,
then runs the CLI with the remaining arguments (``purge ATOM_ID --subject S``). The
hook lives only here: production code never installs one and reads no fault switch
from the environment.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence

from graphsvc.cli import main as cli_main
from graphsvc.ops.purge import STEPS, install_step_hook


def main(argv: Sequence[str]) -> int:
    step, *cli_args = argv
    if step not in STEPS:
        raise SystemExit(f"unknown purge step {step!r}; one of {', '.join(STEPS)}")

    def kill_after(committed: str) -> None:
        if committed == step:
            os.kill(os.getpid(), signal.SIGKILL)

    install_step_hook(kill_after)
    return cli_main(cli_args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
