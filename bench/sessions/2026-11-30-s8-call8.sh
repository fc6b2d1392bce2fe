#!/usr/bin/env bash
# Session 8's call 8 (2026-11-30, nvidia-h200; bundle of the commit that
# adds this script's parent, "eval --help: what a program is"):
#   bash bench/sessions/2026-11-30-s8-call8.sh > $OUT/call.log 2>&1
# Run again unchanged as call 9 with the bundle of a0eea69 (the final code
# of the session; results in bench/results/eval/2026-11-30-s8/call9/).
# Results: bench/results/eval/2026-11-30-s8/call8/.
# 1. --build-arg on the GPU: a program that links cuBLAS
#    (test/eval/Inputs/uses-cublas.cu), checked against itself and
#    against a copy of itself, with metrics.
# 2. The bundle's GPU check (dist/gpu-check.sh, written in session 1 and
#    kept beside the bundle): analyze, eval cold and warm, timing of
#    prog.cu against its own events, the seeded off-by-one, crash and hang
#    candidates, and a normal evaluation after them.
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
W=$(mktemp -d); tar -C $W -xJf $B; T=$(ls -d $W/clang-optiml-*)/bin/clang-optiml
cp test/eval/Inputs/uses-cublas.cu $W/gemm.cu; cp $W/gemm.cu $W/orig.cu
for cmd in "eval $W/gemm.cu --build-arg=-lcublas --no-sanitize" \
           "eval $W/gemm.cu --against $W/orig.cu --build-arg=-lcublas --no-sanitize" \
           "eval $W/gemm.cu --no-sanitize"; do
  echo "\$ clang-optiml $cmd"; $T $cmd --cache-dir $W/c 2>&1; echo "[exit $?]"; echo
done
mkdir -p $OUT/check
OUT=$OUT/check timeout 400 bash dist/gpu-check.sh > /dev/null 2>&1; echo "gpu-check rc $?"
grep -E "^==|^--|rc=|NOT VERIFIED|deterministic|verified|timed out|killed|memcheck|median" $OUT/check/log.txt | head -60
