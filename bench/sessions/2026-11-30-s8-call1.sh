#!/usr/bin/env bash
# Session 8's call 1 (2026-11-30, nvidia-h200; bundle built from 33d5c5e):
#   T=300 bash bench/sessions/2026-11-30-s8-call1.sh > $OUT/call.log 2>&1
# Results: bench/results/eval/2026-11-30-s8/call1/.
# Does CUDA's lazy module loading put the extra DRAM writes into ncu's
# first launch of each kernel? Since CUDA 12.2 a function is loaded into
# device memory at its first launch; ncu profiles the program's own first
# launch, while the probe profiles relaunches after it. ncu counts about
# 2.5 MB more than the kernel's own writes on first launches (session 7,
# call 4) and about 0.5 MB more on later launches of the same kernel
# (session 6: prog.cu's saxpy 4.76 / 2.77 / 2.78 MB). Runs
# bench/eval/ncu_compare.py (eval as shipped against ncu, the same
# environment for both) with CUDA_MODULE_LOADING=EAGER and without, and
# once with the profiler kept across launches (OPTIML_PROBE_FRESH_PROFILER=0)
# under EAGER; then probe_gpu_checks.py on the shipped bundle.
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
T=${T:-300}
export PATH=/usr/local/cuda/bin:$PATH
[ -f $B ] || { echo "missing $B (tools/bundle.sh)"; exit 2; }
s=$(date +%s); el() { echo "[$(( $(date +%s) - s )) s] $*"; }
P3="examples/reduction.cu examples/matmul.cu test/Inputs/eval/prog.cu"
nc() { # name need-seconds env... -- programs
  local n=$1 need=$2; shift 2
  local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  local left=$(( T - ($(date +%s) - s) ))
  [ $left -lt $need ] && { el "skipped $n: $left s left"; return; }
  el "$n"
  env "${envs[@]}" timeout $left python3 bench/eval/ncu_compare.py \
    --bundle $B --out $OUT/ncu-$n "$@" > $OUT/ncu-$n.log 2>&1
}
E=CUDA_MODULE_LOADING=EAGER
nc eager-1 50 $E -- $P3; nc lazy-1 50 -- $P3; nc eager-2 50 $E -- $P3
nc eager-reused 30 $E OPTIML_PROBE_FRESH_PROFILER=0 -- test/Inputs/eval/prog.cu
left=$(( T - ($(date +%s) - s) ))
if [ $left -gt 60 ]; then
  el checks
  timeout $left python3 bench/eval/probe_gpu_checks.py --bundle $B --out $OUT/checks \
    > $OUT/checks.log 2>&1; tail -n 3 $OUT/checks.log
fi
el done
for f in $OUT/ncu-*.log; do
  echo "== $(basename $f .log)"
  grep -E "DRAM write|within|FAIL|rror" $f
done
( cd $OUT && tar czf ../all.tgz --exclude=call.log . && find . -mindepth 1 -not -name call.log -delete \
  && mv ../all.tgz . && ls -la )
