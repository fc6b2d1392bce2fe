#!/usr/bin/env bash
# Session 8's calls 6 and 7 (2026-11-30, nvidia-h200; bundles of the commits that
# add --workdir (call 6) and the hint for a missing input (call 7)):
#   bash bench/sessions/2026-11-30-s8-call6.sh > $OUT/call.log 2>&1
# Results: bench/results/eval/2026-11-30-s8/call6/. test/eval/gpu-workdir.test
# by hand through the bundle (the node has no lit): a program that reads a
# file named by a relative --run-arg, from the directory holding it; the
# same with --workdir; and a name of nothing (the program's own error).
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
R=$PWD
W=$(mktemp -d); tar -C $W -xJf $B; T=$(ls -d $W/clang-optiml-*)/bin/clang-optiml
mkdir -p $W/p/data && cp test/eval/Inputs/reads-file.cu $W/p/ && cp test/eval/Inputs/data/values.txt $W/p/data/
cd $W/p
run() { echo "\$ (cd $1) clang-optiml ${*:2}"; (cd $1 && $T "${@:2}" 2>&1); echo "[exit $?]"; echo; }
run $W/p eval reads-file.cu -v --no-sanitize --no-metrics --cache-dir $W/c --run-arg data/values.txt
run / eval $W/p/reads-file.cu --no-sanitize --no-metrics --cache-dir $W/c --workdir $W/p/data --run-arg values.txt
run $W/p eval reads-file.cu --no-sanitize --no-metrics --cache-dir $W/c --run-arg data/nothing.txt
