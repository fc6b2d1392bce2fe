#!/usr/bin/env bash
# Session 8's call 10 (2026-11-30, nvidia-h200; bundle of the commit that
# adds --source):
#   bash bench/sessions/2026-11-30-s8-call10.sh > $OUT/call.log 2>&1
# Results: bench/results/eval/2026-11-30-s8/call10/. A program in two files
# (test/eval/Inputs/two-files: the kernel and main in main.cu, a host
# checksum in checksum.cpp) checked against itself and against a copy of
# main.cu with --source, and a candidate whose kernel is wrong.
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
W=$(mktemp -d); tar -C $W -xJf $B; T=$(ls -d $W/clang-optiml-*)/bin/clang-optiml
cp test/eval/Inputs/two-files/* $W/; cp $W/main.cu $W/orig.cu
sed 's/a \* y\[i\]/a * y[i] + 1.0f/' $W/main.cu > $W/wrong.cu
cd $W
for cmd in "eval main.cu --source checksum.cpp --no-sanitize" \
           "eval main.cu --against orig.cu --source checksum.cpp" \
           "eval wrong.cu --against orig.cu --source checksum.cpp --no-sanitize --no-metrics"; do
  echo "\$ clang-optiml $cmd"; $T $cmd --cache-dir $W/c 2>&1; echo "[exit $?]"; echo
done
