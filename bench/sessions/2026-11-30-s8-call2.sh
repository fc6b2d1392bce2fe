#!/usr/bin/env bash
# Session 8's call 2 (2026-11-30, nvidia-h200; bundle built from 33d5c5e):
#   T=420 bash bench/sessions/2026-11-30-s8-call2.sh > $OUT/call.log 2>&1
# Results: bench/results/eval/2026-11-30-s8/call2/.
# eval's times on the four bundled examples against an independent
# CUDA-event measurement, side by side (bench/eval/event_timing.py: the
# program rewritten to time its own launch statement with events, three
# rounds alternating with eval), with L2 as the launches leave it and with
# L2 flushed before each timed launch (eval --flush-l2).
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
T=${T:-420}
export PATH=/usr/local/cuda/bin:$PATH
[ -f $B ] || { echo "missing $B (tools/bundle.sh)"; exit 2; }
s=$(date +%s); el() { echo "[$(( $(date +%s) - s )) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
el default
timeout $(( T - 30 )) python3 bench/eval/event_timing.py --bundle $B --out $OUT/default \
  --deadline $(( T / 2 - 30 )) > $OUT/default.log 2>&1; echo "rc $?"
el flush
left=$(( T - ($(date +%s) - s) - 10 ))
timeout $left python3 bench/eval/event_timing.py --bundle $B --out $OUT/flush --flush-l2 \
  --deadline $(( left - 90 )) > $OUT/flush.log 2>&1; echo "rc $?"
el done
cat $OUT/default.log $OUT/flush.log
( cd $OUT && tar czf ../all.tgz --exclude=call.log . && find . -mindepth 1 -not -name call.log -delete \
  && mv ../all.tgz . && ls -la )
