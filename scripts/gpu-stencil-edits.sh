#!/usr/bin/env bash
# On a GPU node: apply the stencil shared-tiling and hoist edits to the
# benchmark's naive jacobi2d and conv2d programs with the bundle, then
# `clang-optiml eval` each result against its original (verification launch
# by launch, timing, metrics). Full-size programs run without the sanitizers
# (thousands of launches on 8192^2 grids); copies shrunk to sizes that are not
# multiples of the block (edges inside blocks) run with memcheck and racecheck.
# Everything lands in $OUT (default ./gpu-results/stencil-edits); about 3-4
# minutes in all.
#
#   scripts/gpu-stencil-edits.sh dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
set -uo pipefail
bundle=${1:-dist/clang-optiml-0.1.0-linux-x86_64.tar.xz}
out=${OUT:-$PWD/gpu-results}/stencil-edits
mkdir -p "$out"
work=$(mktemp -d)
# TOOL=<clang-optiml> skips the bundle (a dry run of the apply steps).
if [ -n "${TOOL:-}" ]; then
  tool=$TOOL
else
  tar -C "$work" -xJf "$bundle"
  tool=$(ls -d "$work"/clang-optiml-*)/bin/clang-optiml
fi
export PATH=/usr/local/cuda/bin:$PATH
began=$(date +%s)
limit=${LIMIT:-280}

jacobi=bench/kernels/jacobi2d/naive.cu
conv=bench/kernels/conv2d/naive.cu
# Small copies: the same programs at sizes whose edges cut through blocks.
sed 's/static const int N = 8192; /static const int N = 1000; /' "$jacobi" \
  > "$work/jacobi2d_small.cu"
sed 's/static const int H = 8192, W = 8192;/static const int H = 1000, W = 777;/' \
  "$conv" > "$work/conv2d_small.cu"

echo '{"kind":"shared-tiling","target":"jacobi"}' > "$work/jacobi-tiling.json"
echo '{"kind":"shared-tiling","target":"conv2d"}' > "$work/conv2d-tiling.json"
echo '{"kind":"hoist","target":"conv2d/loop0.0"}' > "$work/conv2d-hoist.json"
echo '[{"kind":"shared-tiling","target":"conv2d"},{"kind":"hoist","target":"conv2d/loop1.0"}]' \
  > "$work/conv2d-tiling-hoist.json"

# case name, original, edit file, extra eval flags
run_case() {
  local name=$1 orig=$2 edit=$3
  shift 3
  if (( $(date +%s) - began > limit )); then
    echo "== skipping $name: past ${limit}s"
    return
  fi
  echo "== $name: apply $(cat "$edit") to $orig"
  cp "$edit" "$out/$name.edit.json"
  if ! "$tool" apply "$orig" --edit "$edit" -o "$out/$name.cu"; then
    echo "apply failed"
    return
  fi
  echo "== $name: eval $* --against $orig"
  local t0
  t0=$(date +%s)
  timeout 150 "$tool" eval "$out/$name.cu" --against "$orig" --json "$@" \
    > "$out/$name.eval.json" 2> "$out/$name.eval.err"
  echo "exit $? after $(( $(date +%s) - t0 )) s"
  head -c 3000 "$out/$name.eval.json"; echo
  tail -5 "$out/$name.eval.err"
}

{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$tool" --version
  run_case jacobi2d-small-tiling "$work/jacobi2d_small.cu" "$work/jacobi-tiling.json"
  run_case conv2d-small-tiling-hoist "$work/conv2d_small.cu" "$work/conv2d-tiling-hoist.json"
  run_case jacobi2d-tiling "$jacobi" "$work/jacobi-tiling.json" --no-sanitize
  run_case conv2d-tiling "$conv" "$work/conv2d-tiling.json" --no-sanitize
  run_case conv2d-hoist "$conv" "$work/conv2d-hoist.json" --no-sanitize
  run_case conv2d-tiling-hoist "$conv" "$work/conv2d-tiling-hoist.json" --no-sanitize
} 2>&1 | tee "$out/stencil-edits.log"
ls -la "$out"
