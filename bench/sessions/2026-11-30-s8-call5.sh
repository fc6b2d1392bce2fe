#!/usr/bin/env bash
# Session 8's call 5 (2026-11-30, nvidia-h200; bundle of 2188742):
#   bash bench/sessions/2026-11-30-s8-call5.sh > $OUT/call.log 2>&1
# Run again unchanged as call 11 with the bundle of the commit "eval: a
# candidate that is not verified gets no speedup figure..." (results in
# bench/results/eval/2026-11-30-s8/call11/; docs/eval.md shows that run).
# Results: bench/results/eval/2026-11-30-s8/call5/. eval's text report as
# a user sees it (for docs/eval.md's examples): saxpy with every check,
# matmul without the sanitizers, and an off-by-one saxpy against the
# original.
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
W=$(mktemp -d); tar -C $W -xJf $B; T=$(ls -d $W/clang-optiml-*)/bin/clang-optiml
cp examples/saxpy.cu examples/matmul.cu $W/
sed 's/if (i < n)/if (i < n - 1)/' examples/saxpy.cu > $W/saxpy-offbyone.cu
cd $W
for cmd in "eval saxpy.cu" "eval matmul.cu --no-sanitize" \
           "eval saxpy-offbyone.cu --against saxpy.cu"; do
  echo "\$ clang-optiml $cmd"
  s=$(date +%s.%N)
  $T $cmd 2>&1; echo "[exit $?, $(echo "$(date +%s.%N) - $s" | bc) s]"
  echo
done
