#!/usr/bin/env bash
# Creates .venv and installs graphsvc with its dev extras at the versions in
# requirements.lock (the ones the suite was last run on; scripts/lock.sh writes it);
# re-installs only when pyproject.toml or the lock changed. Downloads are cached by pip in ~/.cache/pip (outside the
# clone), so a fresh clone on a machine that installed once takes a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [ ! -x .venv/bin/python ]; then
  echo "bootstrap: creating .venv with $($PY --version)" >&2
  "$PY" -m venv .venv
fi
stamp=.venv/.graphsvc-installed
want=$(cat pyproject.toml requirements.lock | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "bootstrap: installing dependencies (first time on a machine: ~3 GB of torch)..." >&2
  .venv/bin/python -m pip install -q --upgrade pip >&2
  .venv/bin/python -m pip install -q --progress-bar off -c requirements.lock -e '.[dev]' >&2
  # A new file moved into place: the stamp may be a hard link shared with a copy.
  echo "$want" > "$stamp.tmp" && mv "$stamp.tmp" "$stamp"
fi
