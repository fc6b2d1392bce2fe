#!/usr/bin/env bash
# Session 3, device call 1 (repository root on the H200 node, dist/ carried;
# bundle of 07:24 UTC, 360c6ea plus work then in progress): which L2
# preparation reproduces ncu's DRAM write bytes (bench/eval/l2clean), the
# wide-load tails (bench/checks/wide-loads), and where an evaluation of a suite
# program spends its time (eval --json stages next to the plain run).
set -u
export PATH=/usr/local/cuda/bin:$PATH
s=$(date +%s); el() { echo "[$(( $(date +%s) - s )) s] $*"; }
el l2clean
timeout 200 bash bench/eval/l2clean/run.sh > $OUT/l2clean.log 2>&1; tail -12 $OUT/l2clean.log
el wide-loads
nvcc -O3 -arch=sm_90 -std=c++17 -o $OUT/wide-check bench/checks/wide-loads/check.cu && timeout 60 $OUT/wide-check > $OUT/wide-check.log 2>&1; echo "rc=$?"; tail -15 $OUT/wide-check.log; rm -f $OUT/wide-check
el eval stages
W=$(mktemp -d); tar -C $W -xJf dist/clang-optiml-0.1.0-linux-x86_64.tar.xz; T=$(ls -d $W/clang-optiml-*)/bin/clang-optiml
mkdir -p $OUT/stages
for p in softmax transpose; do
  nvcc -O3 -arch=sm_90 -o $W/$p bench/kernels/$p/naive.cu
  for i in 1 2; do /usr/bin/time -f "$p plain run %e s" $W/$p > /dev/null; done 2>&1 | tee -a $OUT/stages/plain.txt
  timeout 150 $T eval bench/results/restructure/$p/optimized.cu --against bench/kernels/$p/naive.cu --json --verify-first 1 --no-sanitize > $OUT/stages/$p.json 2> $OUT/stages/$p.err
  python3 -c "import json,sys; d=json.load(open('$OUT/stages/$p.json')); print('$p', d.get('wall_seconds'), d.get('stages_seconds'))"
done
el done
