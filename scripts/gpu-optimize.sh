#!/usr/bin/env bash
# On a GPU node: unpack the relocatable bundle (tools/bundle.sh) and run
# `clang-optiml optimize` on example programs, one after the other, each with
# its own run directory (journal, candidates, report). Results are packed into
# one archive under $OUT (or ./gpu-results), so they survive the node.
#
#   scripts/gpu-optimize.sh dist/clang-optiml-*.tar.xz examples/transpose.cu examples/saxpy.cu
#
# Environment: BUDGET (evaluations per program, default 12), TIME (wall limit
# per program, default 150s), STRATEGY (default mcts), SEED (default 1),
# EXTRA (more optimize flags), DEADLINE (seconds after which no further
# program is started, default none).
set -uo pipefail
bundle=$1
shift
out=${OUT:-$PWD/gpu-results}
mkdir -p "$out"
work=$(mktemp -d)
tar -C "$work" -xJf "$bundle"
tool=$(ls -d "$work"/clang-optiml-*)/bin/clang-optiml
export PATH=/usr/local/cuda/bin:$PATH
runs=$work/runs
mkdir -p "$runs"
began=$(date +%s)
pack() {
  # Snapshots are large and stay behind; journals, sources and reports travel.
  (cd "$runs" && find . -type f -size -4M -print0 |
     tar --null -czf "$out/optimize-runs.tar.gz" -T -)
}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$tool" --version
  for src in "$@"; do
    name=$(basename "$src" .cu)
    if [ -n "${DEADLINE:-}" ] && (( $(date +%s) - began > DEADLINE )); then
      echo "== skipping $src: past the ${DEADLINE}s deadline"
      continue
    fi
    echo "== optimize $src (budget ${BUDGET:-12}, time ${TIME:-150s}, ${STRATEGY:-mcts}, seed ${SEED:-1})"
    start=$(date +%s)
    "$tool" optimize "$src" -o "$runs/$name.optimized.cu" \
      --budget "${BUDGET:-12}" --time "${TIME:-150s}" \
      --strategy "${STRATEGY:-mcts}" --seed "${SEED:-1}" \
      --run-dir "$runs/$name" --report "$runs/$name.html" ${EXTRA:-}
    echo "exit $? after $(( $(date +%s) - start )) s"
    pack
  done
} 2>&1 | tee "$out/optimize.log"
pack
ls -la "$out"
