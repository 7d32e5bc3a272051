#!/usr/bin/env bash
# Quick start 1: install, start the managed Neo4j, load the demo corpus, serve GraphQL.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/graphsvc serve --seed "$@"
