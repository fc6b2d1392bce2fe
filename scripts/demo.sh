#!/usr/bin/env bash
# Installs, builds, and runs clang-optiml on the bundled saxpy example.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh clang-optiml
example=${1:-examples/saxpy.cu}
echo
echo "\$ build/bin/clang-optiml analyze $example"
build/bin/clang-optiml analyze "$example"
