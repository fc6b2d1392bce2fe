#!/usr/bin/env bash
# On a GPU node: shared-tiling's register tile (micro=8) against the plain
# tiles (micro=1) on matrix products, with the bundle. Each edit is applied
# with `clang-optiml apply`, then `clang-optiml eval` checks the result
# against its original launch by launch and times it:
#   - the benchmark's naive sgemm (4096^3), without the sanitizers;
#   - a copy at 1000 x 777 x 333 (no size a multiple of a tile or a step,
#     rows and columns differ), with memcheck and racecheck;
# then, as a user types it, `clang-optiml optimize matmul.cu -o
# matmul.fast.cu --budget 3` in a copy of examples/, and bench/run.py's
# event-timed sgemm row with the micro=8 result beside cuBLAS.
# Everything lands in $OUT/gemm-edits (default ./gpu-results/gemm-edits).
#
#   scripts/gpu-gemm-edits.sh dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
set -uo pipefail
bundle=${1:-dist/clang-optiml-0.1.0-linux-x86_64.tar.xz}
root=$PWD
out=${OUT:-$PWD/gpu-results}/gemm-edits
mkdir -p "$out"
work=$(mktemp -d)
tar -C "$work" -xJf "$bundle"
bin=$(ls -d "$work"/clang-optiml-*)/bin
tool=$bin/clang-optiml
export PATH=$bin:/usr/local/cuda/bin:$PATH

sgemm=bench/kernels/sgemm/naive.cu
sed 's/static const int M = 4096, N = 4096, K = 4096;/static const int M = 1000, N = 777, K = 333;/' \
  "$sgemm" > "$work/sgemm_small.cu"
echo '{"kind":"shared-tiling","target":"sgemm","params":{"tile":16,"micro":8}}' > "$work/micro8.json"
echo '{"kind":"shared-tiling","target":"sgemm","params":{"tile":16}}' > "$work/micro1.json"

# case name, original, edit file, extra eval flags
run_case() {
  local name=$1 orig=$2 edit=$3
  shift 3
  echo "== $name: apply $(cat "$edit") to $orig"
  if ! "$tool" apply "$orig" --edit "$edit" -o "$out/$name.cu"; then
    echo "apply failed"
    return
  fi
  local t0
  t0=$(date +%s)
  timeout 150 "$tool" eval "$out/$name.cu" --against "$orig" "$@" \
    > "$out/$name.eval.txt" 2>&1
  echo "eval exit $? after $(( $(date +%s) - t0 )) s"
  grep -iE "verified|verdict|speedup|ms|sanitizer|FAIL|error" \
    "$out/$name.eval.txt" | head -12
}

{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$tool" --version
  run_case sgemm-small-micro8 "$work/sgemm_small.cu" "$work/micro8.json"
  run_case sgemm-micro8 "$sgemm" "$work/micro8.json" --no-sanitize
  run_case sgemm-micro1 "$sgemm" "$work/micro1.json" --no-sanitize
  echo "== optimize, as a user types it, in a copy of examples/"
  cp -r examples "$work/examples"
  (cd "$work/examples" &&
     timeout 200 clang-optiml optimize matmul.cu -o matmul.fast.cu --budget 3 \
       > "$out/optimize-matmul.txt" 2>&1
   echo "optimize exit $?"; grep -vE "^\[" "$out/optimize-matmul.txt" | tail -12)
  echo "== bench/run.py: sgemm with the micro=8 result"
  mkdir -p "$work/opt/sgemm"
  cp "$out/sgemm-micro8.cu" "$work/opt/sgemm/optimized.cu"
  (cd "$root" && timeout 150 python3 bench/run.py --out "$out/suite" \
     --kernels sgemm --optimized-dir "$work/opt" > "$out/suite.log" 2>&1)
  grep -E "^\| sgemm" "$out/suite/summary.md"
} 2>&1 | tee "$out/gemm-edits.log"
