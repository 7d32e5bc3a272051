#!/usr/bin/env bash
# Writes requirements.lock: the exact versions installed in .venv, which the suite was
# run on. scripts/bootstrap.sh installs with it as a constraints file, so a fresh machine
# gets what CI tested. Run it after changing dependencies in pyproject.toml and a green
# test run; tests/unit/test_lock_file.py fails while a dependency is missing from it.
set -euo pipefail
cd "$(dirname "$0")/.."
{
  echo "# Versions the graphsvc suite was last run on (scripts/lock.sh writes this file)."
  echo "# Python $(.venv/bin/python -c 'import platform; print(platform.python_version())'), $(uname -m) Linux."
  .venv/bin/python -m pip freeze --exclude-editable | LC_ALL=C sort -f
} > requirements.lock
echo "wrote requirements.lock ($(grep -vc '^#' requirements.lock) packages)" >&2
