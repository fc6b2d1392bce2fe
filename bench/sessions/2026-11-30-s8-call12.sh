#!/usr/bin/env bash
# Session 8's call 12 (2026-11-30, nvidia-h200; bundle of 7fd365a, after
# the review removed the probe's unused l2Clean schemes):
#   bash bench/sessions/2026-11-30-s8-call12.sh > $OUT/call.log 2>&1
# Results: bench/results/eval/2026-11-30-s8/call12/. The probe's GPU checks
# (bench/eval/probe_gpu_checks.py: the L2 clean against ncu, device against
# host verdicts, last-launch matching, ...) on the final bundle.
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
timeout 200 python3 bench/eval/probe_gpu_checks.py --bundle $B --out $OUT/checks > $OUT/checks.log 2>&1
echo "rc $?"; tail -n 25 $OUT/checks.log
