#!/usr/bin/env bash
# Installs, builds, and runs every test suite through ctest (whose closing
# line says how many passed). GPU tests run only where a GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh optiml-test-deps
ctest --test-dir build --output-on-failure "$@"
