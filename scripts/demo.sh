#!/usr/bin/env bash
# Installs, builds, and runs clang-optiml's main job on a bundled example:
# `optimize` where a CUDA GPU is present, else a dry run (the first level of
# candidate edits, each applied, checked and compiled with nvcc).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh clang-optiml optiml-probe
example=${1:-examples/transpose.cu}
name=$(basename "$example" .cu)
tool=build/bin/clang-optiml
echo
if nvidia-smi -L >/dev/null 2>&1; then
  echo "\$ $tool optimize $example -o $name.optimized.cu --report $name.html"
  "$tool" optimize "$example" -o "$name.optimized.cu" --report "$name.html"
else
  echo "clang-optiml: no CUDA GPU here, so 'optimize' cannot measure" \
       "candidates; showing a dry run instead (each first-level edit applied," \
       "checked and compiled)."
  echo "\$ $tool optimize --dry-run $example"
  "$tool" optimize --dry-run "$example"
fi
