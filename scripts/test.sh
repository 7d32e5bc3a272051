#!/usr/bin/env bash
# Quick start 2: install, then run every test against a real Neo4j that the test
# session starts itself (or GRAPHSVC_NEO4J_URI), and write VALIDATION.md.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh || exit 1
.venv/bin/python -m pytest "$@"
rc=$?
.venv/bin/python scripts/validation.py || true
exit $rc
