#!/usr/bin/env bash
# Session 7's call 4 (2026-11-30 17:46, nvidia-h200, cold machine, 131 s;
# bundle built from ac521ba):
#   T=240 bash bench/sessions/2026-11-30-s7-call4.sh > $OUT/call.log 2>&1
# Results: bench/results/eval/2026-11-30-s7/call4/. After this call
# OPTIML_PROBE_CLEAN_IN_PASS was removed from eval (the probe keeps
# "cleanInPass"): to run this again, build the bundle at ac521ba.
# The DRAM-write gap's last
# suspect: something the range profiler leaves dirty in L2 between the
# probe's clean and the launch. OPTIML_PROBE_CLEAN_IN_PASS=1 cleans L2
# inside each pass, after cuptiRangeProfilerStart, and profiles a user
# range around the relaunch alone (as ncu flushes right before the kernel).
# bench/eval/ncu_compare.py: reduction and matmul (default, then in-pass,
# twice), then all five programs in-pass (time rows too: a user range may
# time differently from an automatic one).
#   T=330 bash bench/sessions/next-call.sh > $OUT/call.log 2>&1; tail -n 40 $OUT/call.log
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
T=${T:-330}
export PATH=/usr/local/cuda/bin:$PATH
[ -f $B ] || { echo "missing $B (tools/bundle.sh)"; exit 2; }
s=$(date +%s); el() { echo "[$(( $(date +%s) - s )) s] $*"; }
P2="examples/reduction.cu examples/matmul.cu"
nc() { # name need-seconds env... -- programs
  local n=$1 need=$2; shift 2
  local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  local left=$(( T - ($(date +%s) - s) ))
  [ $left -lt $need ] && { el "skipped $n: $left s left"; return; }
  el "$n"
  env "${envs[@]}" timeout $left python3 bench/eval/ncu_compare.py \
    --bundle $B --out $OUT/ncu-$n "$@" > $OUT/ncu-$n.log 2>&1
}
I=OPTIML_PROBE_CLEAN_IN_PASS=1
nc inpass-1 40 $I -- $P2; nc default-1 40 -- $P2; nc inpass-2 40 $I -- $P2
nc all5-inpass 70 $I --
el done
for f in $OUT/ncu-*.log; do
  echo "== $(basename $f .log)"
  grep -E "DRAM write|within|FAIL|rror" $f | grep -E "block_sum|matmul|FAIL|within|rror" | grep -v "prog.cu.*pass"
done
( cd $OUT && tar czf ../all.tgz --exclude=call.log . && find . -mindepth 1 -not -name call.log -delete \
  && mv ../all.tgz . && ls -la )
