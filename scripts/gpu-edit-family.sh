#!/usr/bin/env bash
# On a GPU node, with the bundle: one transform family, checked the way a
# user meets it.
#   - a styles program (a lit test's input that checks itself against the
#     CPU), through scripts/gpu-styles.sh: its `// EDIT: {...}` lines
#     applied one after another, then one `clang-optiml eval` against the
#     original, launch by launch (memcheck and racecheck on);
#   - the suite's program bench/kernels/KERNEL/naive.cu: SUITE_EDIT applied
#     and eval'd against the naive program;
#   - as a user types it, `clang-optiml optimize naive.cu -o naive.fast.cu`
#     (default settings) in a copy of bench/kernels/KERNEL (skipped with
#     OPTIMIZE=0; OPTIMIZE_TIMEOUT seconds, default 300);
#   - bench/run.py's event-timed row of KERNEL with the edited program
#     beside the reference.
# Everything lands in $OUT/NAME (default ./gpu-results/NAME).
#
#   scripts/gpu-edit-family.sh BUNDLE NAME STYLES.cu KERNEL SUITE_EDIT
#   e.g. scripts/gpu-edit-family.sh dist/clang-optiml-0.1.0-linux-x86_64.tar.xz \
#          block-scan test/edit/block-scan-styles.cu scan \
#          '{"kind":"block-scan","target":"scan_block"}'
# (bench/gpu-run.py's block-scan, constant-memory, ... tasks run it).
set -uo pipefail
if [ $# -ne 5 ]; then
  sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
bundle=$1 name=$2 styles=$3 kernel=$4 suite_edit=$5
root=$PWD
out=${OUT:-$PWD/gpu-results}/$name
mkdir -p "$out"
work=$(mktemp -d)
tar -C "$work" -xJf "$bundle"
bin=$(ls -d "$work"/clang-optiml-*)/bin
tool=$bin/clang-optiml
export PATH=$bin:/usr/local/cuda/bin:$PATH
OPTIMIZE_TIMEOUT=${OPTIMIZE_TIMEOUT:-300}

{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$tool" --version
  echo "== styles: $styles"
  bash "$root/scripts/gpu-styles.sh" "$tool" "$out" "$styles"
  echo "== the suite's $kernel: $suite_edit"
  echo "$suite_edit" > "$work/suite.json"
  "$tool" apply "bench/kernels/$kernel/naive.cu" --edit "$work/suite.json" \
    -o "$out/$kernel.cu" || echo "apply failed"
  t0=$(date +%s)
  timeout 200 "$tool" eval "$out/$kernel.cu" \
    --against "bench/kernels/$kernel/naive.cu" --no-sanitize \
    > "$out/$kernel.eval.txt" 2>&1
  echo "eval exit $? after $(( $(date +%s) - t0 )) s"
  grep -iE "verified|verdict|speedup|ms|FAIL|error" "$out/$kernel.eval.txt" | head -12
  if [ "${OPTIMIZE:-1}" != 0 ]; then
    echo "== optimize, as a user types it, in a copy of bench/kernels/$kernel"
    cp -r "bench/kernels/$kernel" "$work/$kernel"
    (cd "$work/$kernel" &&
       timeout "$OPTIMIZE_TIMEOUT" clang-optiml optimize naive.cu -o naive.fast.cu \
         > "$out/optimize.txt" 2>&1
     echo "optimize exit $?"; tail -14 "$out/optimize.txt")
  fi
  echo "== bench/run.py: $kernel with the edited program"
  mkdir -p "$work/opt/$kernel"
  cp "$out/$kernel.cu" "$work/opt/$kernel/optimized.cu"
  (cd "$root" && timeout 150 python3 bench/run.py --out "$out/suite" \
     --kernels "$kernel" --optimized-dir "$work/opt" > "$out/suite.log" 2>&1)
  grep -E "^\| $kernel" "$out/suite/summary.md"
} 2>&1 | tee "$out/$name.log"
