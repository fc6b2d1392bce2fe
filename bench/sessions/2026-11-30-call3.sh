#!/usr/bin/env bash
# Device call 3 of 2026-11-30 (repository root on the H200 node, dist/ carried):
# optimize on examples/reduction.cu, then the LLM policy against the scripted
# server (scripts/gpu-llm.sh).
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
s=$(date +%s); el() { echo "[$(( $(date +%s) - s )) s] $*"; }
el reduction
mkdir -p $OUT/red
OUT=$OUT/red BUDGET=40 TIME=100s timeout 290 bash scripts/gpu-optimize.sh $B examples/reduction.cu > /dev/null 2>&1
tail -12 $OUT/red/optimize.log
el llm
mkdir -p $OUT/llm
OUT=$OUT/llm BUDGET=4 TIME=60s LIMIT=200 timeout 260 bash scripts/gpu-llm.sh $B > $OUT/llm/gpu-llm.log 2>&1
tail -40 $OUT/llm/gpu-llm.log
el done
